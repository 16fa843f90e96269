import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions, Transport } from '../core/request.js';
import { calendarDate } from '../internal/dates.js';
import { buildQuery } from '../internal/query.js';

export type StatsInterval = 'hour' | 'day' | 'week' | 'month';
export type StatsDimension =
  | 'event_name'
  | 'path'
  | 'referrer'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
  | 'channel'
  | 'entry_page'
  | 'exit_page'
  | 'country'
  | 'device'
  | 'browser'
  | 'os';

/**
 * One condition of `filters`: `dimension` is one of `values` (or, with `not`, none of them). All
 * conditions hold at once.
 */
export interface StatsFilter {
  dimension: StatsDimension;
  values: readonly string[] | string;
  not?: boolean;
}

/**
 * The range and filter every stats call takes. The dates are local dates in `timezone`: a string
 * `YYYY-MM-DD` is sent as given; a `Date` is sent as the calendar date it falls on in `timezone`
 * (default UTC), so `new Date()` means "today" where the merchant is.
 */
export interface StatsParams {
  merchantId: string;
  /** First day, inclusive: `YYYY-MM-DD` in `timezone`, or a `Date` (its calendar date there). */
  startDate: Date | string;
  /** Last day, inclusive, as `startDate`; at most 400 days counting both ends. */
  endDate: Date | string;
  /** IANA zone the dates and intervals are read in (server default `UTC`). */
  timezone?: string;
  /** Event names to count (all when absent). */
  events?: readonly string[] | string;
  /**
   * Keep only what matches, e.g. `[{ dimension: 'country', values: ['DE'] }]`, or the wire form
   * `country==DE;channel==Organic Search|Email` as a string.
   */
  filters?: readonly StatsFilter[] | string;
}

export interface StatsSummaryParams extends StatsParams {
  /** `previous`: also the totals of the period of equal length before. */
  compare?: 'previous';
}

export interface StatsTimeseriesParams extends StatsParams {
  /** Point length (server default `day`); `hour` for ranges of at most 31 days. */
  interval?: StatsInterval;
}

export interface StatsBreakdownParams extends StatsParams {
  dimension: StatsDimension;
  /** Rows before `other`, 1..100 (server default 10). */
  limit?: number;
  /** A goal: each row then has `conversions` and `conversionRate`. */
  goal?: string;
}

export interface StatsFunnelParams extends StatsParams {
  /** 2 to 8 goal ids, in order. */
  steps: readonly string[];
  /** ISO 8601 duration from the first step to the last (server default `P1D`). */
  window?: string;
}

export interface StatsFunnel {
  range: StatsRange;
  window: string;
  steps: {
    goalId: string;
    name: string;
    /** Visitors who reached this step after every step before it, in order, within the window. */
    visitors: number;
    /** This step's visitors over the first's. */
    conversionRate: number;
    /** Share of the step before that did not reach this one. */
    dropOff: number;
  }[];
}

export type StatsAttributionModel = 'first_touch' | 'last_touch';
export type StatsAttributionDimension = 'channel' | 'referrer' | 'utm_source' | 'utm_campaign';

export interface StatsAttributionParams extends StatsParams {
  model: StatsAttributionModel;
  dimension: StatsAttributionDimension;
  /** Rows, 1..100 (server default 10). */
  limit?: number;
}

export interface StatsAttributionRow {
  value: string;
  /** Visitors whose first (or last) visit had this value. */
  visitors: number;
  purchases: number;
  revenue: StatsRevenue[];
}

export interface StatsAttribution {
  range: StatsRange;
  model: StatsAttributionModel;
  dimension: StatsAttributionDimension;
  /** Most purchases first. */
  rows: StatsAttributionRow[];
}

export interface StatsRevenue {
  currency: string;
  /** Exact decimal sum, as a string. */
  amount: string;
}

interface StatsCounts {
  events: number;
  /** Distinct visitors (muid): exact up to 65,536 a point, within 1% beyond. */
  visitors: number;
  pageviews: number;
  purchases: number;
  revenue: StatsRevenue[];
  /** Visits begun in the period (a visitor's events with no gap over 30 minutes). */
  visits: number;
  /** Share of those visits with one page view and no other interaction, 0 to 1. */
  bounceRate: number;
  /** Mean seconds from a visit's first event to its last. */
  visitDuration: number;
  viewsPerVisit: number;
}

export interface StatsGoalTotals {
  goalId: string;
  name: string;
  /** Converting events (page views for a path goal). */
  conversions: number;
  /** Distinct visitors who converted. */
  visitors: number;
  /** Converting visitors over all visitors, 0 to 1. */
  conversionRate: number;
}

export interface StatsTotals extends StatsCounts {
  /** Events the collectors refused as sent by bots in the period. */
  botEvents: number;
  /** Each of the merchant's goals, oldest first. */
  goals: StatsGoalTotals[];
}

export interface StatsRange {
  startDate: string;
  endDate: string;
  timezone: string;
}

export interface StatsSummary {
  range: StatsRange;
  totals: StatsTotals;
  /** With `compare: 'previous'`; else null. */
  previous: { range: StatsRange; totals: StatsTotals } | null;
}

export interface StatsPoint extends StatsCounts {
  /** Interval start, ISO 8601 with the zone's offset, e.g. `2026-11-01T00:00:00-04:00`. */
  start: string;
}

export interface StatsTimeseries {
  range: StatsRange;
  interval: StatsInterval;
  /** One per interval, zero-filled, in order. */
  points: StatsPoint[];
}

export interface StatsBreakdownRow {
  value: string;
  /** Page views for every dimension but `event_name`; visits for `entry_page` and `exit_page`. */
  events: number;
  visitors: number;
  visits: number;
  /** With `goal`: the goal's conversions. */
  conversions?: number;
  /** With `goal`: the row's converting visitors over its visitors. */
  conversionRate?: number;
}

export interface StatsBreakdown {
  range: StatsRange;
  dimension: StatsDimension;
  /** Largest first. */
  rows: StatsBreakdownRow[];
  /** The values past `limit` summed (value `other`); null when none. */
  other: StatsBreakdownRow | null;
}

export interface StatsRealtime {
  /** Distinct visitors with an event in the last 5 minutes. */
  visitors: number;
  pageviews: number;
  /** The pages those visitors are on, most visitors first (at most 10). */
  pages: { value: string; visitors: number }[];
}

/** The wire form of `filters`: `;` between conditions, `|` between values, a backslash escaping both. */
function filtersParam(filters: StatsParams['filters']): string | undefined {
  if (filters === undefined || typeof filters === 'string') return filters;
  const escaped = (value: string) => value.replace(/[\\;|]/g, (c) => `\\${c}`);
  return filters
    .map((f) => {
      const values = typeof f.values === 'string' ? [f.values] : f.values;
      return `${f.dimension}${f.not ? '!=' : '=='}${values.map(escaped).join('|')}`;
    })
    .join(';');
}

/** `client.stats`: `/v1/partners/stats/*`, a merchant's aggregates. */
export class Stats {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Totals over the range (`GET /v1/partners/stats/summary`). */
  summary(params: StatsSummaryParams, options?: RequestOptions): APIPromise<StatsSummary> {
    return this.#get('summary', params, { compare: params.compare }, options);
  }

  /** One point per hour, day, week or month of the range (`GET /v1/partners/stats/timeseries`). */
  timeseries(params: StatsTimeseriesParams, options?: RequestOptions): APIPromise<StatsTimeseries> {
    return this.#get('timeseries', params, { interval: params.interval }, options);
  }

  /** Top values of a dimension and the rest as `other` (`GET /v1/partners/stats/breakdown`). */
  breakdown(params: StatsBreakdownParams, options?: RequestOptions): APIPromise<StatsBreakdown> {
    return this.#get(
      'breakdown',
      params,
      { dimension: params.dimension, limit: params.limit, goal: params.goal },
      options,
    );
  }

  /** Visitors through goals in order within a window (`GET /v1/partners/stats/funnel`). */
  funnel(params: StatsFunnelParams, options?: RequestOptions): APIPromise<StatsFunnel> {
    return this.#get('funnel', params, { steps: params.steps.join(','), window: params.window }, options);
  }

  /** Purchases and revenue by first- or last-touch value (`GET /v1/partners/stats/attribution`). */
  attribution(params: StatsAttributionParams, options?: RequestOptions): APIPromise<StatsAttribution> {
    return this.#get(
      'attribution',
      params,
      { model: params.model, dimension: params.dimension, limit: params.limit },
      options,
    );
  }

  /** Visitors on the site in the last 5 minutes and their pages (`GET /v1/partners/stats/realtime`). */
  realtime(
    params: { merchantId: string; filters?: StatsParams['filters'] },
    options?: RequestOptions,
  ): APIPromise<StatsRealtime> {
    return this.#transport.get<StatsRealtime>(
      '/v1/partners/stats/realtime',
      buildQuery({ merchantId: params.merchantId, filters: filtersParam(params.filters) }),
      options,
    );
  }

  #get<T>(
    kind: string,
    params: StatsParams,
    extra: Record<string, string | number | undefined>,
    options: RequestOptions | undefined,
  ): APIPromise<T> {
    let query: URLSearchParams;
    try {
      // The server's default zone is UTC: a Date without a zone is read there too.
      const zone = params.timezone ?? 'UTC';
      query = buildQuery({
        merchantId: params.merchantId,
        startDate: calendarDate(params.startDate, zone, 'startDate'),
        endDate: calendarDate(params.endDate, zone, 'endDate'),
        timezone: params.timezone,
        events: typeof params.events === 'string' ? params.events.split(',') : params.events,
        filters: filtersParam(params.filters),
        ...extra,
      });
    } catch (error) {
      return this.#transport.failed(error);
    }
    return this.#transport.get<T>(`/v1/partners/stats/${kind}`, query, options);
  }
}
