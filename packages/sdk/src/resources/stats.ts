import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions, Transport } from '../core/request.js';
import { calendarDate } from '../internal/dates.js';
import { buildQuery } from '../internal/query.js';

export type StatsInterval = 'hour' | 'day' | 'week' | 'month';
export type StatsDimension = 'event_name' | 'path' | 'referrer' | 'utm_source' | 'utm_medium' | 'utm_campaign';

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
}

export interface StatsRevenue {
  currency: string;
  /** Exact decimal sum, as a string. */
  amount: string;
}

export interface StatsTotals {
  events: number;
  /** Distinct visitors (muid), a HyperLogLog estimate (standard error about 0.8%). */
  visitors: number;
  pageviews: number;
  purchases: number;
  revenue: StatsRevenue[];
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

export interface StatsPoint extends StatsTotals {
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
  events: number;
  visitors: number;
}

export interface StatsBreakdown {
  range: StatsRange;
  dimension: StatsDimension;
  /** Largest first. */
  rows: StatsBreakdownRow[];
  /** The values past `limit` summed (value `other`); null when none. */
  other: StatsBreakdownRow | null;
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
    return this.#get('breakdown', params, { dimension: params.dimension, limit: params.limit }, options);
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
        ...extra,
      });
    } catch (error) {
      return this.#transport.failed(error);
    }
    return this.#transport.get<T>(`/v1/partners/stats/${kind}`, query, options);
  }
}
