import { describe, expect, it } from 'vitest';
import {
  CollectEvent,
  DomainInput,
  HostnameInput,
  isCanonicalInstant,
  ListEventsQuery,
  MAX_INSTANT_MS,
  MIN_INSTANT_MS,
  parseDateBound,
  parseEventNames,
  parseIsoInstant,
  readIsoInstant,
} from '../src/index.js';

describe('isCanonicalInstant', () => {
  it.each([
    ['2026-11-22T10:20:30.123Z', true],
    ['2024-02-29T23:59:59.999Z', true],
    ['1000-01-01T00:00:00.000Z', true],
    ['2026-11-22T10:20:30Z', false], // toISOString would add .000
    ['2025-02-29T00:00:00.000Z', false], // no such day
    ['2026-11-22T24:00:00.000Z', false],
    ['0999-01-01T00:00:00.000Z', false], // left to the general parser
    ['2026-11-22t10:20:30.123z', false],
    ['2026-11-22T10:20:30.12xZ', false],
  ])('%s: %s', (value, expected) => {
    expect(isCanonicalInstant(value)).toBe(expected);
    // Whenever it says yes, the value is exactly what the parser and toISOString make of it.
    if (expected) expect(parseIsoInstant(value)?.toISOString()).toBe(value);
  });
});

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

describe('the toISOString form (read without the general parser)', () => {
  it('reads back every instant toISOString writes, across years, leap days and milliseconds', () => {
    const ms = [Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2000, 1, 29), Date.UTC(1000, 0, 1), MAX_INSTANT_MS];
    // 2,000 instants stepped over the years 1000-9999 (an odd step: every field moves).
    const step = Math.floor((MAX_INSTANT_MS - Date.UTC(1000, 0, 1)) / 2000) + 7_919;
    for (let i = 0; i < 2000; i++) ms.push(Date.UTC(1000, 0, 1) + i * step);
    for (const t of ms) {
      const iso = new Date(t).toISOString();
      expect(parseIsoInstant(iso)?.getTime()).toBe(t);
      expect(parseIsoInstant(iso.replace(/\.\d{3}Z$/, 'Z'))?.getTime()).toBe(Math.floor(t / 1000) * 1000);
    }
  });

  it.each([
    '2026-02-29T00:00:00Z',
    '1900-02-29T00:00:00.000Z',
    '2026-04-31T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-11-22T23:60:00Z',
    '2026-11-22T23:59:60.000Z',
    '2026-11-22T1a:00:00Z',
    '2026-11-22T10:00:00.1a3Z',
  ])('rejects %j', (input) => {
    expect(parseIsoInstant(input)).toBeNull();
  });

  it.each([
    ['0999-12-31T23:59:59.999Z', '0999-12-31T23:59:59.999Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['2026-11-22t10:20:30z', '2026-11-22T10:20:30.000Z'],
    ['2026-11-22T10:20:30.12Z', '2026-11-22T10:20:30.120Z'],
  ])('%s (another form of the same length family) is %s', (input, iso) => {
    expect(parseIsoInstant(input)?.toISOString()).toBe(iso);
  });
});

describe('the accepted window: years 0001-9999 in UTC, after the offset', () => {
  it.each([
    ['9999-12-31T23:59:00-23:59', 'year 10000 once the offset is applied (issue 30, finding 1)'],
    ['9999-12-31T23:59:59.999-00:01', 'one minute past the window'],
    ['0001-01-01T00:00:00+00:01', 'one minute before the window'],
    ['0000-12-31', 'year 0 (PostgreSQL has none)'],
    ['0000-06-01T12:00:00Z', 'year 0 as a date-time'],
  ])('%s is out of range: %s', (input) => {
    expect(parseIsoInstant(input)).toBeNull();
    expect(readIsoInstant(input)).toBe('range');
  });

  it.each([
    ['9999-12-31', '9999-12-31T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:00+23:59', '9999-12-31T00:00:00.000Z'],
    ['0001-01-01', '0001-01-01T00:00:00.000Z'],
    ['0001-01-01T00:00:00-23:59', '0001-01-01T23:59:00.000Z'],
    ['0050-03-01T10:00:00Z', '0050-03-01T10:00:00.000Z'],
  ])('%s is accepted as %s (years 1-99 are not read as 1901-1999)', (input, iso) => {
    expect(parseIsoInstant(input)?.toISOString()).toBe(iso);
  });

  it('the bounds are the first and last millisecond of the window, and toISOString writes them with 4 digits', () => {
    expect(new Date(MIN_INSTANT_MS).toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(new Date(MAX_INSTANT_MS).toISOString()).toBe('9999-12-31T23:59:59.999Z');
  });

  it('a malformed value is a format problem, not a range one', () => {
    expect(readIsoInstant('2026-02-30')).toBe('format');
    expect(readIsoInstant('+010000-01-01T00:00:00Z')).toBe('format');
  });

  it('every schema using the parser refuses it, naming the window', () => {
    const event = CollectEvent.safeParse({ event_name: 'PageView', event_time: '9999-12-31T23:59:00-23:59' });
    expect(event.success).toBe(false);
    expect(event.error?.issues[0]?.message).toBe(
      'event_time must fall within years 0001-9999 in UTC (after its offset is applied)',
    );
    const merchantId = '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c';
    for (const key of ['startDate', 'endDate'] as const) {
      const query = ListEventsQuery.safeParse({ merchantId, [key]: '0000-12-31' });
      expect(query.error?.issues[0]?.message).toBe(
        `${key} must fall within years 0001-9999 in UTC (after its offset is applied)`,
      );
    }
    expect(ListEventsQuery.safeParse({ merchantId, startDate: '0001-01-01', endDate: '9999-12-31' }).success).toBe(
      true,
    );
  });

  it('a date-only end bound of the last day stays inside the window', () => {
    expect(parseDateBound('9999-12-31', 'end')?.getTime()).toBe(MAX_INSTANT_MS);
  });
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
