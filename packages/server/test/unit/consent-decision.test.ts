import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cookielessVisitor, decideConsent, type TagConsent } from '../../src/features/tags/consent.js';

// The collector's side of consent (docs/decisions/consent.md): the tag's settings decide, the
// script's signal only says what the visitor answered, Sec-GPC is a denial only a grant overrides.
const tag = (mode: TagConsent['mode'], cookieless = false, respectGpc = true): TagConsent => ({
  mode,
  cookieless,
  respectGpc,
});
const COOKIE = (state: string) => ({ state, visitor: 'cookie', clearCookie: false });
const HASH = { state: 'cookieless', visitor: 'hash', clearCookie: true };
const DROP = { state: null, visitor: 'none', clearCookie: true };

describe('decideConsent', () => {
  it.each([
    // mode none: the cookie whatever the script says (cookieless: the hash for every event)
    [tag('none'), undefined, false, COOKIE('not_required')],
    [tag('none'), 'implied', true, COOKIE('not_required')],
    [tag('none', true), 'granted', false, HASH],
    // opt-in: nothing named before a grant
    [tag('opt-in'), undefined, false, DROP],
    [tag('opt-in'), 'implied', false, DROP],
    [tag('opt-in', true), undefined, false, HASH],
    [tag('opt-in', true), 'cookieless', false, HASH],
    [tag('opt-in'), 'granted', false, COOKIE('granted')],
    [tag('opt-in'), 'granted', true, COOKIE('granted')],
    // opt-out: implied until denied; GPC (header) counts as denied unless respectGpc is off
    [tag('opt-out'), undefined, false, COOKIE('implied')],
    [tag('opt-out'), 'implied', false, COOKIE('implied')],
    [tag('opt-out'), 'implied', true, DROP],
    [tag('opt-out', true), 'implied', true, HASH],
    [tag('opt-out', false, false), 'implied', true, COOKIE('implied')],
    [tag('opt-out'), 'cookieless', false, DROP],
    [tag('opt-out'), 'granted', true, COOKIE('granted')],
    // denied: nothing stored, the cookie cleared, in every mode
    [tag('none'), 'denied', false, DROP],
    [tag('opt-out', true), 'denied', false, DROP],
  ] as const)('%o with %s (Sec-GPC %s)', (settings, signal, gpc, expected) => {
    expect(decideConsent(settings, signal, gpc)).toEqual(expected);
  });
});

describe('cookielessVisitor', () => {
  it('is stable for one salt, merchant, address and user agent, and differs when any of them does', () => {
    const salt = randomBytes(32);
    const id = cookielessVisitor(salt, 'm1', '203.0.113.7', 'UA');
    expect(id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(cookielessVisitor(salt, 'm1', '203.0.113.7', 'UA')).toBe(id);
    const others = [
      cookielessVisitor(randomBytes(32), 'm1', '203.0.113.7', 'UA'),
      cookielessVisitor(salt, 'm2', '203.0.113.7', 'UA'),
      cookielessVisitor(salt, 'm1', '203.0.113.8', 'UA'),
      cookielessVisitor(salt, 'm1', '203.0.113.7', 'UA2'),
      // The separator keeps fields apart: ('m1', '2') is not ('m12', '').
      cookielessVisitor(salt, 'm1', '2', ''),
      cookielessVisitor(salt, 'm12', '', ''),
    ];
    expect(new Set([id, ...others]).size).toBe(others.length + 1);
  });
});
