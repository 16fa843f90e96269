import { describe, expect, it } from 'vitest';
import { DomainInput, HostnameInput, parseDateBound, parseEventNames, parseIsoInstant } from '../src/index.js';

describe('parseIsoInstant', () => {
  it.each([
    ['2026-11-22', '2026-11-22T00:00:00.000Z'],
    ['2026-11-22T10:20:30Z', '2026-11-22T10:20:30.000Z'],
    ['2026-11-22T10:20:30.123456Z', '2026-11-22T10:20:30.123Z'],
    ['2026-11-22T10:20:30+02:00', '2026-11-22T08:20:30.000Z'],
    ['2026-11-22T10:20:30-0130', '2026-11-22T11:50:30.000Z'],
    ['2026-11-22T10:20', '2026-11-22T10:20:00.000Z'],
  ])('%s is %s (UTC when no offset)', (input, iso) => {
    expect(parseIsoInstant(input)?.toISOString()).toBe(iso);
  });

  it.each(['2026-02-30', '2026-13-01', '2026-11-22T24:00:00Z', 'yesterday', '', '2026-11-22T10:20:30+2', '1700000000'])(
    'rejects %j',
    (input) => {
      expect(parseIsoInstant(input)).toBeNull();
    },
  );
});

describe('parseDateBound', () => {
  it('moves a date-only end bound to the last millisecond of its UTC day', () => {
    expect(parseDateBound('2026-11-22', 'end')?.toISOString()).toBe('2026-11-22T23:59:59.999Z');
    expect(parseDateBound('2026-11-22', 'start')?.toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(parseDateBound('2026-11-22T05:00:00Z', 'end')?.toISOString()).toBe('2026-11-22T05:00:00.000Z');
  });
});

describe('parseEventNames', () => {
  it('splits, trims, drops empties and duplicates', () => {
    expect(parseEventNames('Purchase, PageView,,Purchase ,')).toEqual(['Purchase', 'PageView']);
    expect(parseEventNames(['A,B', ' C '])).toEqual(['A', 'B', 'C']);
    expect(parseEventNames(undefined)).toEqual([]);
  });
});

describe('domain inputs', () => {
  it('accepts root domains, punycode TLDs and normalises case', () => {
    expect(DomainInput.parse(' Example.CO.uk ')).toBe('example.co.uk');
    expect(DomainInput.parse('example.xn--p1ai')).toBe('example.xn--p1ai');
  });

  it.each(['http://example.com', 'www.example.com', 'example.com/path', 'exa mple.com', 'localhost', '-bad.com'])(
    'refuses %j as a domain',
    (input) => {
      expect(DomainInput.safeParse(input).success).toBe(false);
    },
  );

  it('accepts host names of any depth for verification', () => {
    expect(HostnameInput.parse('a.b.Shop.example.com')).toBe('a.b.shop.example.com');
    expect(HostnameInput.safeParse('https://shop.example.com').success).toBe(false);
  });
});
