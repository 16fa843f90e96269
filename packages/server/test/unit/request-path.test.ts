import { describe, expect, it } from 'vitest';
import { queryKeys } from '../../src/transport/http/guards.js';
import { newRequestId } from '../../src/transport/http/request-id.js';
import { parsedPathOf, parseRequestPath, plainPathOf } from '../../src/transport/http/request-path.js';

/** Random request targets over an alphabet that holds every character the fast paths treat specially. */
function randomTargets(count: number, alphabet: string, seed: number): string[] {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let target = '/';
    const length = next() % 24;
    for (let j = 0; j < length; j++) target += alphabet[next() % alphabet.length];
    out.push(target);
  }
  return out;
}

describe('the request path fast path', () => {
  const alphabet = 'aZ09-._~/%2e\\?#&= +\t:;@!$()*,[]|^`{}"<>\u00e9\u0000';

  it('answers exactly what the URL parser answers, whenever it answers', () => {
    let answered = 0;
    for (const target of randomTargets(50_000, alphabet, 7)) {
      const plain = plainPathOf(target);
      if (plain === null) continue;
      answered++;
      expect(plain, target).toBe(parsedPathOf(target));
    }
    // The alphabet is mostly special characters: still, plain paths come up often enough to count.
    expect(answered).toBeGreaterThan(500);
  });

  it('leaves to the URL parser what it would change', () => {
    for (const target of [
      '/v1/./x',
      '/v1/../x',
      '/v1/x/..',
      '/%76%31',
      '/v1\\x',
      '/v1/x#frag',
      '/v1/\tx',
      '/v1//x/.',
    ]) {
      expect(plainPathOf(target), target).toBeNull();
    }
    expect(parseRequestPath('/v1/a/../b?x=1')).toEqual({ pathname: '/v1/b', route: '/v1/b' });
  });

  it('answers the paths clients send', () => {
    expect(plainPathOf('/v1/partners/events?merchantId=1&limit=100')).toBe('/v1/partners/events');
    expect(parseRequestPath('/V1/Partners/Merchant/?page=2')).toEqual({
      pathname: '/V1/Partners/Merchant/',
      route: '/v1/partners/merchant',
    });
  });
});

describe('query parameter names', () => {
  it('are the names URLSearchParams decodes, for any query', () => {
    const alphabet = 'ab_=&%2F5f+ ;?\u00e9';
    for (const target of randomTargets(50_000, alphabet, 11)) {
      const query = target.slice(1);
      expect([...queryKeys(query)], query).toEqual([...new URLSearchParams(query).keys()]);
    }
  });
});

describe('generated request ids', () => {
  it('are req_ and 32 hex digits, never repeated across pool refills', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const id = newRequestId();
      expect(id).toMatch(/^req_[0-9a-f]{32}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(2_000);
  });
});
