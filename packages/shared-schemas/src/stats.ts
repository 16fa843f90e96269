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
export const STATS_DIMENSIONS = [
  'event_name',
  'path',
  'referrer',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'channel',
  'entry_page',
  'exit_page',
  'country',
  'device',
  'browser',
  'os',
] as const;
export type StatsDimension = (typeof STATS_DIMENSIONS)[number];
/** GA4's default channel groups, a visit's `channel`. */
export const STATS_CHANNELS = [
  'Direct',
  'Cross-network',
  'Paid Shopping',
  'Paid Search',
  'Paid Social',
  'Paid Video',
  'Display',
  'Organic Shopping',
  'Organic Social',
  'Organic Video',
  'Organic Search',
  'Referral',
  'Email',
  'Affiliates',
  'Audio',
  'SMS',
  'Mobile Push Notifications',
  'Unassigned',
] as const;
export const STATS_DEVICES = ['desktop', 'mobile', 'tablet'] as const;
/** Clauses of a `filters` parameter at most, and values of one clause. */
export const STATS_FILTER_MAX_CLAUSES = 10;
export const STATS_FILTER_MAX_VALUES = 20;
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

/** One clause of `filters`: a dimension is (`==`) or is not (`!=`) one of some values. */
export interface StatsFilter {
  dimension: StatsDimension;
  op: 'is' | 'is_not';
  values: string[];
}

/** Splits on `separator` where a backslash does not escape it; `decode`: `\\x` reads as `x`. */
function splitEscaped(text: string, separator: string, decode: boolean): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      const next = text[++i] as string;
      current += decode ? next : c + next;
    } else if (c === separator) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

/**
 * `country==DE;channel==Organic Search|Email;device!=mobile`: clauses joined by `;` (all must
 * hold), values by `|` (any), `==` or `!=`; a backslash escapes `;`, `|` or itself in a value.
 * Null and a message naming the bad clause when it is not one.
 */
export function parseStatsFilters(text: string): { filters: StatsFilter[] } | { error: string } {
  if (text.trim() === '') return { filters: [] };
  const clauses = splitEscaped(text, ';', false)
    .map((clause) => clause.trim())
    .filter((clause) => clause !== '');
  if (clauses.length > STATS_FILTER_MAX_CLAUSES) return { error: `at most ${STATS_FILTER_MAX_CLAUSES} clauses` };
  const filters: StatsFilter[] = [];
  for (const clause of clauses) {
    const match = /^\s*([a-z_]+)\s*(==|!=)(.*)$/s.exec(clause);
    if (!match) return { error: `"${clause.slice(0, 60)}" is not dimension==value or dimension!=value` };
    const dimension = match[1] as StatsDimension;
    if (!(STATS_DIMENSIONS as readonly string[]).includes(dimension)) {
      return { error: `unknown dimension "${dimension}" (one of ${STATS_DIMENSIONS.join(', ')})` };
    }
    const values = splitEscaped(match[3] as string, '|', true);
    if (values.length > STATS_FILTER_MAX_VALUES || values.some((value) => value.length > 200)) {
      return { error: `${dimension}: at most ${STATS_FILTER_MAX_VALUES} values of at most 200 characters` };
    }
    filters.push({ dimension, op: match[2] === '==' ? 'is' : 'is_not', values });
  }
  return { filters };
}

const StatsFiltersParam = z
  .string()
  .max(4000)
  .superRefine((value, ctx) => {
    const parsed = parseStatsFilters(value);
    if ('error' in parsed) ctx.addIssue({ code: 'custom', message: `filters: ${parsed.error}` });
  })
  .meta({
    description: `Keep only what matches: clauses \`dimension==value\` or \`dimension!=value\` joined by \`;\` (all hold), values joined by \`|\` (any); a backslash escapes \`;\`, \`|\` or itself. Dimensions: ${STATS_DIMENSIONS.join(', ')}.`,
    example: 'country==DE;channel==Organic Search|Email',
  });

/** How a statistics answer is sent: JSON (default) or CSV (also `Accept: text/csv`). */
const csvFormat = z
  .enum(['json', 'csv'])
  .meta({
    description: '`csv`: the answer as `text/csv` (also with `Accept: text/csv`); default JSON.',
    example: 'csv',
  })
  .optional();

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
  filters: StatsFiltersParam.optional(),
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
    format: csvFormat,
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

const breakdownLimit = z.coerce
  .number()
  .int()
  .min(1)
  .max(STATS_BREAKDOWN_MAX_LIMIT)
  .default(STATS_BREAKDOWN_DEFAULT_LIMIT)
  .meta({
    description: `Rows before \`other\` (1..${STATS_BREAKDOWN_MAX_LIMIT}, default ${STATS_BREAKDOWN_DEFAULT_LIMIT}).`,
  });

export const StatsBreakdownQuery = z
  .object({
    ...statsQueryShape,
    dimension: z.enum(STATS_DIMENSIONS).meta({
      description:
        "`event_name`; from page views: `path`; of the page view's visit: `referrer` (its landing's host), `utm_source`, `utm_medium`, `utm_campaign` (its landing URL's), `channel` (GA4's default grouping), `entry_page`, `exit_page`; of its client: `country` (ISO 3166-1 alpha-2), `device` (desktop, mobile, tablet), `browser`, `os`.",
    }),
    limit: breakdownLimit,
    format: csvFormat,
    goal: Uuid.meta({
      description: 'A goal of the merchant: each row then gives its `conversions` and `conversionRate`.',
      example: '0b8e7c2a-3f5d-4e1b-9a6c-7d8e9f0a1b2c',
    }).optional(),
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
    description: 'Distinct visitors (muid): exact up to 65,536 a point, within 1% beyond.',
  }),
  pageviews: z.number().int().min(0).meta({ description: '`PageView` events.' }),
  purchases: z.number().int().min(0).meta({ description: '`Purchase` events.' }),
  revenue: z.array(StatsRevenue).meta({ description: 'Per currency, from `Purchase` data `value` and `currency`.' }),
};

/** Visits: a visitor's events with no gap over 30 minutes, counted in the period they begin. */
const visitMetrics = {
  visits: z.number().int().min(0).meta({ description: 'Visits begun in the period.' }),
  bounceRate: z.number().min(0).max(1).meta({
    description: 'Share of those visits with one page view and no other interaction (0 to 1; 0 when no visit).',
  }),
  visitDuration: z.number().min(0).meta({
    description: "Mean seconds from a visit's first event to its last (engagement reports included).",
  }),
  viewsPerVisit: z.number().min(0).meta({ description: 'Page views per visit.' }),
};

export const StatsGoalTotals = z
  .object({
    goalId: Uuid,
    name: z.string(),
    conversions: z.number().int().min(0).meta({ description: 'Converting events (page views for a path goal).' }),
    visitors: z.number().int().min(0).meta({ description: 'Distinct visitors who converted.' }),
    conversionRate: z.number().min(0).max(1).meta({ description: 'Converting visitors over all visitors, 0 to 1.' }),
  })
  .meta({ id: 'StatsGoalTotals' });
export type StatsGoalTotals = z.infer<typeof StatsGoalTotals>;

export const StatsTotals = z
  .object({
    ...counts,
    ...visitMetrics,
    botEvents: z.number().int().min(0).meta({
      description: 'Events the collectors refused as sent by bots (by their user agent) in the period.',
    }),
    goals: z.array(StatsGoalTotals).meta({ description: "Each of the merchant's goals, oldest first." }),
  })
  .meta({ id: 'StatsTotals' });
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
    ...visitMetrics,
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
    events: z.number().int().min(0).meta({
      description: 'Events (page views for every dimension but `event_name`; visits for `entry_page` and `exit_page`).',
    }),
    visitors: z.number().int().min(0),
    visits: z.number().int().min(0),
    conversions: z.number().int().min(0).optional().meta({ description: "With `goal`: the goal's conversions." }),
    conversionRate: z.number().min(0).max(1).optional().meta({
      description: "With `goal`: the row's converting visitors over its visitors, 0 to 1.",
    }),
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

export const StatsRealtimeQuery = z
  .object({ merchantId: statsQueryShape.merchantId, filters: statsQueryShape.filters })
  .meta({ id: 'StatsRealtimeQuery' });
export type StatsRealtimeQuery = z.input<typeof StatsRealtimeQuery>;

export const StatsRealtimeResponse = z
  .object({
    visitors: z.number().int().min(0).meta({ description: 'Distinct visitors with an event in the last 5 minutes.' }),
    pageviews: z.number().int().min(0).meta({ description: 'Page views in the last 5 minutes.' }),
    pages: z
      .array(z.object({ value: z.string(), visitors: z.number().int().min(0) }))
      .meta({ description: 'The pages those visitors are on, most visitors first (at most 10).' }),
  })
  .meta({ id: 'StatsRealtimeResponse' });
export type StatsRealtimeResponse = z.infer<typeof StatsRealtimeResponse>;

/** Steps of a funnel, and its longest window. */
export const STATS_FUNNEL_MIN_STEPS = 2;
export const STATS_FUNNEL_MAX_STEPS = 8;
export const STATS_FUNNEL_MAX_WINDOW_DAYS = 90;

/** An ISO 8601 duration of days, hours, minutes and seconds (`P1D`, `PT30M`, `P2DT12H`) in ms, else null. */
export function isoDurationMs(text: string): number | null {
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(text);
  if (!match || text === 'P' || text.endsWith('T')) return null;
  const [d, h, m, s] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number];
  return (((d * 24 + h) * 60 + m) * 60 + s) * 1000;
}

export const StatsFunnelQuery = z
  .object({
    ...statsQueryShape,
    steps: z
      .string()
      .max(400)
      .transform((value, ctx) => {
        const ids = value.split(',').map((id) => id.trim());
        const valid = ids.every((id) => Uuid.safeParse(id).success);
        if (!valid || ids.length < STATS_FUNNEL_MIN_STEPS || ids.length > STATS_FUNNEL_MAX_STEPS) {
          ctx.addIssue({
            code: 'custom',
            message: `steps must be ${STATS_FUNNEL_MIN_STEPS} to ${STATS_FUNNEL_MAX_STEPS} comma-separated goal ids`,
          });
          return z.NEVER;
        }
        return ids.map((id) => id.toLowerCase());
      })
      .meta({ description: 'The goals of the steps, in order, comma-separated (2 to 8).' }),
    window: z
      .string()
      .max(40)
      .default('P1D')
      .refine(
        (value) => {
          const ms = isoDurationMs(value);
          return ms !== null && ms > 0 && ms <= STATS_FUNNEL_MAX_WINDOW_DAYS * 86_400_000;
        },
        { message: `window must be an ISO 8601 duration (P1D, PT30M) of at most ${STATS_FUNNEL_MAX_WINDOW_DAYS} days` },
      )
      .meta({
        description: 'How long a visitor has from the first step to the last (ISO 8601, default `P1D`).',
        example: 'PT30M',
      }),
    format: csvFormat,
  })
  .superRefine(checkRange)
  .meta({ id: 'StatsFunnelQuery' });
export type StatsFunnelQuery = z.input<typeof StatsFunnelQuery>;

export const StatsFunnelResponse = z
  .object({
    range: StatsRange,
    window: z.string().meta({ example: 'P1D' }),
    steps: z
      .array(
        z.object({
          goalId: Uuid,
          name: z.string(),
          visitors: z.number().int().min(0).meta({
            description: 'Visitors who reached this step after every step before it, in order, within the window.',
          }),
          conversionRate: z.number().min(0).max(1).meta({ description: "This step's visitors over the first's." }),
          dropOff: z
            .number()
            .min(0)
            .max(1)
            .meta({ description: 'Share of the step before that did not reach this one.' }),
        }),
      )
      .meta({ description: 'In the order asked.' }),
  })
  .meta({ id: 'StatsFunnelResponse' });
export type StatsFunnelResponse = z.infer<typeof StatsFunnelResponse>;

export const STATS_ATTRIBUTION_MODELS = ['first_touch', 'last_touch'] as const;
export const STATS_ATTRIBUTION_DIMENSIONS = ['channel', 'referrer', 'utm_source', 'utm_campaign'] as const;

export const StatsAttributionQuery = z
  .object({
    ...statsQueryShape,
    model: z.enum(STATS_ATTRIBUTION_MODELS).meta({
      description:
        "`first_touch`: each visitor's purchases credited to their first visit's value in the range; `last_touch`: to their last visit's.",
      example: 'first_touch',
    }),
    dimension: z.enum(STATS_ATTRIBUTION_DIMENSIONS).meta({
      description: "The visit's value credited: its channel, referrer host, utm_source or utm_campaign.",
      example: 'channel',
    }),
    limit: breakdownLimit,
    format: csvFormat,
  })
  .superRefine(checkRange)
  .meta({ id: 'StatsAttributionQuery' });
export type StatsAttributionQuery = z.input<typeof StatsAttributionQuery>;

export const StatsAttributionRow = z
  .object({
    value: z.string().meta({ example: 'Organic Search' }),
    visitors: z.number().int().min(0).meta({ description: 'Visitors whose first (or last) visit had this value.' }),
    purchases: z.number().int().min(0),
    revenue: z.array(StatsRevenue).meta({ description: 'Per currency, exact.' }),
  })
  .meta({ id: 'StatsAttributionRow' });
export type StatsAttributionRow = z.infer<typeof StatsAttributionRow>;

export const StatsAttributionResponse = z
  .object({
    range: StatsRange,
    model: z.enum(STATS_ATTRIBUTION_MODELS),
    dimension: z.enum(STATS_ATTRIBUTION_DIMENSIONS),
    rows: z.array(StatsAttributionRow).meta({ description: 'Most purchases first (then most visitors, then value).' }),
  })
  .meta({ id: 'StatsAttributionResponse' });
export type StatsAttributionResponse = z.infer<typeof StatsAttributionResponse>;
