import type { StatsFilter } from '@partner/shared-schemas';

/** What a read keeps: a merchant's events of `[start, end)` (ms), some names, some filters. */
export interface Scope {
  merchantId: string;
  start: number;
  end: number;
  names: readonly string[];
  filters: readonly StatsFilter[];
}

/** The instants a time condition is written on: whole UTC days, whole UTC hours, or the events' own. */
export type TimeForm = 'day' | 'hour' | 'instant';

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** The coarsest form that cuts exactly at `instants` (then a projection of that grain can answer). */
export function timeFormOf(instants: readonly number[]): TimeForm {
  if (instants.every((t) => t % DAY === 0)) return 'day';
  return instants.every((t) => t % HOUR === 0) ? 'hour' : 'instant';
}

/** The expression a time condition compares: projections are keyed by these. */
export function timeExpression(form: TimeForm): string {
  return form === 'day' ? 'toDate(event_time)' : form === 'hour' ? 'toStartOfHour(event_time)' : 'event_time';
}

function during(form: TimeForm): string {
  if (form === 'day') {
    return "toDate(event_time) >= toDate(toDateTime({start:Int64}, 'UTC')) AND toDate(event_time) < toDate(toDateTime({end:Int64}, 'UTC'))";
  }
  if (form === 'hour') {
    return 'toStartOfHour(event_time) >= toDateTime({start:Int64}) AND toStartOfHour(event_time) < toDateTime({end:Int64})';
  }
  return 'event_time >= toDateTime64({startMs:Int64} / 1000, 3) AND event_time < toDateTime64({endMs:Int64} / 1000, 3)';
}

/** Dimensions that are columns of `events` (every event of a visit carries the visit's). */
const COLUMNS = new Set([
  'event_name',
  'path',
  'referrer',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'channel',
  'country',
  'device',
  'browser',
  'os',
]);

/** A visit's entry or exit page: its first or last page view's path. */
export const VISIT_PAGE = {
  entry_page: "argMinIf(path, event_time, event_name = 'PageView')",
  exit_page: "argMaxIf(path, event_time, event_name = 'PageView')",
} as const;

/**
 * The WHERE of a read of `events` and its parameters: the merchant, the time (in `form`), the
 * names and the filters. A filter on a column is a condition on each event; one on a visit's entry
 * or exit page keeps the events of the visits whose first or last page it matches.
 */
export function whereOf(scope: Scope, form: TimeForm): { where: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {
    merchant: scope.merchantId,
    start: Math.floor(scope.start / 1000),
    end: Math.floor(scope.end / 1000),
    startMs: scope.start,
    endMs: scope.end,
  };
  const conditions = ['merchant_id = {merchant:UUID}', during(form)];
  if (scope.names.length > 0) {
    params.names = scope.names;
    conditions.push('event_name IN {names:Array(String)}');
  }
  scope.filters.forEach((filter, i) => {
    const name = `f${i}`;
    params[name] = filter.values;
    const not = filter.op === 'is_not' ? 'NOT ' : '';
    if (COLUMNS.has(filter.dimension)) {
      conditions.push(`${filter.dimension} ${not}IN {${name}:Array(String)}`);
      return;
    }
    const page = VISIT_PAGE[filter.dimension as keyof typeof VISIT_PAGE];
    conditions.push(`visit ${not}IN (SELECT visit FROM events WHERE merchant_id = {merchant:UUID} AND ${during('instant')}
      GROUP BY visit HAVING ${page} IN {${name}:Array(String)})`);
  });
  return { where: conditions.join(' AND '), params };
}
