// The element's pure parts: the `filters` attribute read and written as the API's wire form, the
// words a filter and a country are shown with, durations, shares and their changes, and which point
// of a timeseries is not over yet.
import type { StatsTimeseries } from '@partner/sdk';
import { describe, expect, it } from 'vitest';
import { describeFilter, displayValue, formatFilters, parseFilters } from '../src/filters.js';
import { currentPoint, formatDuration, formatShare, pointsChange } from '../src/format.js';

describe('filters', () => {
  it('reads the wire form: clauses by `;`, values by `|`, `!=` excludes, a backslash escapes', () => {
    expect(parseFilters('country==DE;channel!=Email|SMS')).toEqual([
      { dimension: 'country', values: ['DE'], not: false },
      { dimension: 'channel', values: ['Email', 'SMS'], not: true },
    ]);
    expect(parseFilters('path==/a\\;b|/c\\|d\\\\')).toEqual([
      { dimension: 'path', values: ['/a;b', '/c|d\\'], not: false },
    ]);
  });

  it('leaves out what is no clause, keeps the last clause of a dimension', () => {
    expect(parseFilters(null)).toEqual([]);
    expect(parseFilters('')).toEqual([]);
    expect(parseFilters('nope==1;country;device==mobile;device==tablet')).toEqual([
      { dimension: 'device', values: ['tablet'], not: false },
    ]);
  });

  it('writes what it reads', () => {
    const text = 'path==/a\\;b|/c\\|d\\\\;os!=iOS';
    expect(formatFilters(parseFilters(text))).toBe(text);
    expect(formatFilters([])).toBe('');
  });

  it('shows a country by its English name, other values as given', () => {
    expect(displayValue('country', 'DE')).toBe('Germany');
    expect(displayValue('country', '(none)')).toBe('(none)');
    expect(displayValue('browser', 'DE')).toBe('DE');
    expect(describeFilter({ dimension: 'country', values: ['FR', 'DE'], not: true })).toBe(
      'Country is not France or Germany',
    );
  });
});

describe('numbers', () => {
  it('durations, shares and a share’s change in points', () => {
    expect([0, 44.6, 60, 185, 3600, 3725].map(formatDuration)).toEqual([
      '0s',
      '45s',
      '1m 00s',
      '3m 05s',
      '1h 00m',
      '1h 02m',
    ]);
    expect(formatShare(0.425)).toBe('42.5%');
    expect(pointsChange(0.45, 0.4, [true, true])).toEqual({ text: '+5.0 points', direction: 'up' });
    expect(pointsChange(0.4, 0.4, [true, true])).toEqual({ text: 'no change', direction: 'flat' });
    expect(pointsChange(0.5, 0, [true, false])).toEqual({ text: 'new this period', direction: 'up' });
  });
});

describe('currentPoint', () => {
  const series = (startDate: string, endDate: string, starts: string[]): StatsTimeseries =>
    ({
      range: { startDate, endDate, timezone: 'Europe/Paris' },
      interval: 'day',
      points: starts.map((start) => ({ start })),
    }) as StatsTimeseries;
  const days = series('2026-03-28', '2026-03-30', [
    '2026-03-28T00:00:00+01:00',
    '2026-03-29T00:00:00+01:00',
    '2026-03-30T00:00:00+02:00',
  ]);

  it('is the point now falls in, the last one until the range’s last local day is over', () => {
    expect(currentPoint(days, Date.parse('2026-03-29T12:00:00Z'))).toBe(1);
    expect(currentPoint(days, Date.parse('2026-03-30T21:59:00Z'))).toBe(2);
    expect(currentPoint(days, Date.parse('2026-03-30T22:00:00Z'))).toBe(-1);
    expect(currentPoint(days, Date.parse('2026-03-27T22:59:00Z'))).toBe(-1);
  });
});
