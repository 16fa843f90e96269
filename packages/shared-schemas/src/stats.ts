import { z } from 'zod';
import { Uuid } from './common.js';
import { EVENT_FILTER_MAX_NAMES, EventNamesParam } from './event.js';

/** Longest range of a stats query, in days (inclusive of both ends). */
export const STATS_MAX_DAYS = 400;
/** Longest range of an hourly timeseries, in days. */
export const STATS_MAX_HOURLY_DAYS = 31;
export const STATS_BREAKDOWN_DEFAULT_LIMIT = 10;
export const STATS_BREAKDOWN_MAX_LIMIT = 100;
export const STATS_INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export const STATS_DIMENSIONS = ['event_name', 'path', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
/** The value a breakdown shows for events without one (a direct visit, a page without `utm_*`). */
export const STATS_NONE_VALUE = '(none)';

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since 1970-01-01 of a valid `YYYY-MM-DD`, else null. */
export function statsDayNumber(value: string): number | null {
  const match = DATE_PATTERN.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const ms = Date.UTC(year, month - 1, day);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) return null;
  return ms / 86_400_000;
}

/**
 * Zones found valid: each name as sent, lower-cased, to its canonical name. A `DateTimeFormat` per
 * check took 0.5 ms of each stats request and grew the process's memory. Keyed without case, the
 * map is bounded by the runtime's zone names whatever spellings clients send (issue 51, finding 3).
 */
const knownZones = new Map<string, string>();

/** IANA names are printable ASCII (`toLowerCase` is then ASCII only: no U+212A turned into `k`). */
const ZONE_CHARACTERS = /^[!-~]+$/;

/**
 * The runtime's canonical name of an IANA time zone, or null when it is none: the case fixed
 * (`america/new_york` -> `America/New_York`) and, on Node 20, an alias resolved to the ICU (CLDR)
 * canonical name (`US/Eastern` -> `America/New_York`, `Etc/UTC` -> `UTC`, `Asia/Kolkata` ->
 * `Asia/Calcutta`): docs/decisions/stats.md.
 */
export function canonicalTimeZone(zone: string): string | null {
  if (!ZONE_CHARACTERS.test(zone)) return null;
  const key = zone.toLowerCase();
  const known = knownZones.get(key);
  if (known !== undefined) return known;
  let canonical: string;
  try {
    canonical = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  if (knownZones.size < 2_000) knownZones.set(key, canonical);
  return canonical;
}

/** How many names `canonicalTimeZone` keeps (a test reads it: bounded by the runtime's zones). */
export function knownTimeZoneCount(): number {
  return knownZones.size;
}

/**
 * The days statistics answer for (issue 51, finding 9): from 1970-01-01, after every zone's local
 * mean time and where 1970-based date types start, to 2099-12-31. A date outside is 400, never an
 * engine failing on it. (The server also refuses the few 1970s dates of two zones whose offsets
 * were not multiples of 15 minutes then: Africa/Monrovia to 1972, Pacific/Kiritimati to 1979.)
 */
export const STATS_FIRST_DATE = '1970-01-01';
export const STATS_LAST_DATE = '2099-12-31';
const FIRST_DAY = statsDayNumber(STATS_FIRST_DATE)!;
const LAST_DAY = statsDayNumber(STATS_LAST_DATE)!;

const StatsDate = (what: string) =>
  z
    .string()
    .max(10)
    .superRefine((value, ctx) => {
      const day = statsDayNumber(value);
      if (day === null) ctx.addIssue({ code: 'custom', message: `${what} must be a date YYYY-MM-DD` });
      else if (day < FIRST_DAY || day > LAST_DAY) {
        ctx.addIssue({ code: 'custom', message: `${what} must be from ${STATS_FIRST_DATE} to ${STATS_LAST_DATE}` });
      }
    });

const statsQueryShape = {
  merchantId: Uuid.meta({
    description: 'The merchant whose statistics to read (UUID, one of the partner’s merchants).',
    example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
  }),
  startDate: StatsDate('startDate').meta({
    description: `First day of the range, inclusive, a date in \`timezone\` (from its local midnight), ${STATS_FIRST_DATE} to ${STATS_LAST_DATE}.`,
    example: '2026-11-01',
  }),
  endDate: StatsDate('endDate').meta({
    description: `Last day of the range, inclusive, in \`timezone\`; at most ${STATS_MAX_DAYS} days after startDate counting both.`,
    example: '2026-11-30',
  }),
  timezone: z
    .string()
    .max(64)
    // Answered and used under its canonical name: one spelling of a zone is one zone everywhere.
    .transform((zone, ctx) => {
      const canonical = canonicalTimeZone(zone);
      if (canonical === null) {
        ctx.addIssue({ code: 'custom', message: 'timezone must be an IANA time zone such as Europe/Paris' });
        return z.NEVER;
      }
      return canonical;
    })
    .default('UTC')
    .meta({
      description:
        'IANA time zone the dates and intervals are read in (default `UTC`), in any case or as an alias; answered as its canonical name (`range.timezone`). Days start at its local midnight.',
      example: 'America/New_York',
    }),
  events: EventNamesParam.meta({
    description: `Comma-separated event names to count (at most ${EVENT_FILTER_MAX_NAMES}); all events when absent.`,
    example: 'PageView,Purchase',
  }).optional(),
};

/** The range rule: endDate not before startDate, the range at most STATS_MAX_DAYS days. */
function checkRange(value: { startDate: string; endDate: string }, ctx: z.RefinementCtx): void {
  const start = statsDayNumber(value.startDate);
  const end = statsDayNumber(value.endDate);
  if (start === null || end === null) return;
  if (end < start) {
    ctx.addIssue({ code: 'custom', path: ['endDate'], message: 'endDate must not be before startDate' });
  } else if (end - start + 1 > STATS_MAX_DAYS) {
    ctx.addIssue({ code: 'custom', path: ['endDate'], message: `the range is at most ${STATS_MAX_DAYS} days` });
  }
}

export const StatsSummaryQuery = z
  .object({
    ...statsQueryShape,
    compare: z
      .enum(['previous'])
      .meta({
        description: `\`previous\`: also the totals of the preceding period of equal length (which must start on or after ${STATS_FIRST_DATE}).`,
      })
      .optional(),
  })
  .superRefine((value, ctx) => {
    checkRange(value, ctx);
    const start = statsDayNumber(value.startDate);
    const end = statsDayNumber(value.endDate);
    // The period before must be one the statistics answer for too.
    if (value.compare === 'previous' && start !== null && end !== null && start - (end - start + 1) < FIRST_DAY) {
      ctx.addIssue({
        code: 'custom',
        path: ['compare'],
        message: `compare=previous: the period before starts before ${STATS_FIRST_DATE}`,
      });
    }
  })
  .meta({ id: 'StatsSummaryQuery' });
export type StatsSummaryQuery = z.input<typeof StatsSummaryQuery>;

export const StatsTimeseriesQuery = z
  .object({
    ...statsQueryShape,
    interval: z.enum(STATS_INTERVALS).default('day').meta({
      description:
        'Point length (default `day`); days, weeks (from Monday) and months start at local midnight, the first point at startDate.',
    }),
  })
  .superRefine((value, ctx) => {
    checkRange(value, ctx);
    const start = statsDayNumber(value.startDate);
    const end = statsDayNumber(value.endDate);
    if (value.interval === 'hour' && start !== null && end !== null && end - start + 1 > STATS_MAX_HOURLY_DAYS) {
      ctx.addIssue({
        code: 'custom',
        path: ['interval'],
        message: `interval=hour covers at most ${STATS_MAX_HOURLY_DAYS} days`,
      });
    }
  })
  .meta({ id: 'StatsTimeseriesQuery' });
export type StatsTimeseriesQuery = z.input<typeof StatsTimeseriesQuery>;

export const StatsBreakdownQuery = z
  .object({
    ...statsQueryShape,
    dimension: z.enum(STATS_DIMENSIONS).meta({
      description:
        '`event_name`, or from page views: `path`, `referrer` (its host) and the page URL’s `utm_source`, `utm_medium`, `utm_campaign`.',
    }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(STATS_BREAKDOWN_MAX_LIMIT)
      .default(STATS_BREAKDOWN_DEFAULT_LIMIT)
      .meta({
        description: `Rows before \`other\` (1..${STATS_BREAKDOWN_MAX_LIMIT}, default ${STATS_BREAKDOWN_DEFAULT_LIMIT}).`,
      }),
  })
  .superRefine(checkRange)
  .meta({ id: 'StatsBreakdownQuery' });
export type StatsBreakdownQuery = z.input<typeof StatsBreakdownQuery>;

export const StatsRevenue = z
  .object({
    currency: z.string().meta({ example: 'EUR' }),
    amount: z.string().meta({ description: 'Exact decimal sum of the purchases’ `value`.', example: '1234.50' }),
  })
  .meta({ id: 'StatsRevenue' });
export type StatsRevenue = z.infer<typeof StatsRevenue>;

const counts = {
  events: z.number().int().min(0),
  visitors: z.number().int().min(0).meta({
    description: 'Distinct visitors (muid), a HyperLogLog estimate: standard error about 0.8%.',
  }),
  pageviews: z.number().int().min(0).meta({ description: '`PageView` events.' }),
  purchases: z.number().int().min(0).meta({ description: '`Purchase` events.' }),
  revenue: z.array(StatsRevenue).meta({ description: 'Per currency, from `Purchase` data `value` and `currency`.' }),
};

export const StatsTotals = z.object(counts).meta({ id: 'StatsTotals' });
export type StatsTotals = z.infer<typeof StatsTotals>;

const StatsRange = z.object({
  startDate: z.string().meta({ example: '2026-11-01' }),
  endDate: z.string().meta({ example: '2026-11-30' }),
  timezone: z.string().meta({ description: 'The zone’s canonical IANA name.', example: 'UTC' }),
});

export const StatsSummaryResponse = z
  .object({
    range: StatsRange,
    totals: StatsTotals,
    previous: z
      .object({ range: StatsRange, totals: StatsTotals })
      .nullable()
      .meta({ description: 'With `compare=previous`: the preceding period of equal length; else null.' }),
  })
  .meta({ id: 'StatsSummaryResponse' });
export type StatsSummaryResponse = z.infer<typeof StatsSummaryResponse>;

export const StatsPoint = z
  .object({
    start: z.string().meta({
      description: 'Start of the interval, ISO 8601 with the zone’s offset.',
      example: '2026-11-01T00:00:00-04:00',
    }),
    ...counts,
  })
  .meta({ id: 'StatsPoint' });
export type StatsPoint = z.infer<typeof StatsPoint>;

export const StatsTimeseriesResponse = z
  .object({
    range: StatsRange,
    interval: z.enum(STATS_INTERVALS),
    points: z.array(StatsPoint).meta({ description: 'One per interval of the range, zero-filled, in order.' }),
  })
  .meta({ id: 'StatsTimeseriesResponse' });
export type StatsTimeseriesResponse = z.infer<typeof StatsTimeseriesResponse>;

export const StatsBreakdownRow = z
  .object({
    value: z.string().meta({ example: '/pricing' }),
    events: z.number().int().min(0),
    visitors: z.number().int().min(0),
  })
  .meta({ id: 'StatsBreakdownRow' });
export type StatsBreakdownRow = z.infer<typeof StatsBreakdownRow>;

export const StatsBreakdownResponse = z
  .object({
    range: StatsRange,
    dimension: z.enum(STATS_DIMENSIONS),
    rows: z.array(StatsBreakdownRow).meta({ description: 'Largest first (events, then value).' }),
    other: StatsBreakdownRow.nullable().meta({
      description: 'The values past `limit` summed (value `other`; visitors distinct over them); null when none.',
    }),
  })
  .meta({ id: 'StatsBreakdownResponse' });
export type StatsBreakdownResponse = z.infer<typeof StatsBreakdownResponse>;
