import {
  buildPagination,
  EVENT_NAME_MAX,
  type ListEventsResponse,
  parseDateBound,
  parseEventNames,
} from '@partner/shared-schemas';
import { type Query, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { readRows, toQuery } from '../../db/read-rows.js';
import { AppError } from '../../errors.js';
import type { AuthenticatedPartner } from '../partner/authenticate.js';

export const MAX_EVENT_NAME_FILTERS = 50;

export interface ListEventsParams {
  merchantId: string;
  page: number;
  limit: number;
  sortOrder: 'asc' | 'desc';
  sortBy: 'event_time' | 'event_name';
  events?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
}

/** The SQL one event-list request runs, all of it; the bench runs exactly these. */
export interface EventListPlan {
  /** The page: columns id, muid, event_name, event_time (ISO 8601 text), raw_data, in order. */
  data: SQL;
  /**
   * The access check and the count: one row when the merchant is the partner's, with `tagged`
   * (it has a tag) and `total` (float8, the exact number of matching events); no row otherwise.
   */
  count: SQL;
}

interface Filters {
  names: string[];
  start: Date | null;
  end: Date | null;
}

const DAY_MS = 86_400_000;
/** The last instant PostgreSQL and `Date.toISOString()` agree on (year 9999). */
const MAX_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function parseFilters(params: ListEventsParams): Filters {
  const names = parseEventNames(params.events);
  if (names.length > MAX_EVENT_NAME_FILTERS) {
    throw new AppError('VALIDATION_ERROR', `events: at most ${MAX_EVENT_NAME_FILTERS} event names`);
  }
  const tooLong = names.find((name) => name.length > EVENT_NAME_MAX);
  if (tooLong) throw new AppError('VALIDATION_ERROR', `events: names are at most ${EVENT_NAME_MAX} characters`);
  const start = params.startDate ? parseDateBound(params.startDate, 'start') : null;
  const end = params.endDate ? parseDateBound(params.endDate, 'end') : null;
  if (start && end && start > end) {
    throw new AppError('VALIDATION_ERROR', 'startDate must not be after endDate');
  }
  return { names, start, end };
}

const ts = (instant: Date | number) => sql`${new Date(instant).toISOString()}::timestamptz`;
const day = (instant: number) => sql`${new Date(instant).toISOString().slice(0, 10)}::date`;
const nameList = (names: string[]) =>
  sql.join(
    names.map((name) => sql`${name}`),
    sql`, `,
  );

/** `merchant_id = ... [and event_name ...] [and event_time in range]`, on the events table. */
function eventWhere(merchantId: string, names: string[], from: SQL | null, to: SQL | null, toInclusive = true): SQL {
  const parts: SQL[] = [sql`merchant_id = ${merchantId}::uuid`];
  if (names.length === 1) parts.push(sql`event_name = ${names[0]}`);
  else if (names.length > 1) parts.push(sql`event_name in (${nameList(names)})`);
  if (from) parts.push(sql`event_time >= ${from}`);
  if (to) parts.push(toInclusive ? sql`event_time <= ${to}` : sql`event_time < ${to}`);
  return sql.join(parts, sql` and `);
}

const countWhere = (where: SQL) => sql`(select count(*) from events where ${where})`;

/**
 * Exact total without counting every matching row: whole UTC days come from `event_day_counts`
 * (kept exact by triggers on events), and only the partial days at the edges of a range are
 * counted in `events` (an index-only range count). A range without a whole day is counted directly.
 */
function totalExpression(merchantId: string, { names, start, end }: Filters): SQL {
  const startMs = start?.getTime() ?? null;
  // End bounds are inclusive at millisecond precision (event times are stored with 3 digits).
  const endExclusive = end && end.getTime() < MAX_INSTANT ? end.getTime() + 1 : null;
  const firstFullDay = startMs === null ? null : Math.ceil(startMs / DAY_MS) * DAY_MS;
  const fullDaysEnd = endExclusive === null ? null : Math.floor(endExclusive / DAY_MS) * DAY_MS;
  if (firstFullDay !== null && fullDaysEnd !== null && firstFullDay >= fullDaysEnd) {
    return sql`${countWhere(eventWhere(merchantId, names, start && ts(start), end && ts(end)))}`;
  }
  const rollup: SQL[] = [sql`merchant_id = ${merchantId}::uuid`];
  if (names.length > 0) rollup.push(sql`event_name in (${nameList(names)})`);
  if (firstFullDay !== null) rollup.push(sql`day >= ${day(firstFullDay)}`);
  if (fullDaysEnd !== null) rollup.push(sql`day < ${day(fullDaysEnd)}`);
  const terms: SQL[] = [sql`coalesce((select sum(n) from event_day_counts where ${sql.join(rollup, sql` and `)}), 0)`];
  if (start && firstFullDay !== null && firstFullDay !== start.getTime()) {
    terms.push(countWhere(eventWhere(merchantId, names, ts(start), ts(firstFullDay), false)));
  }
  if (end && fullDaysEnd !== null && endExclusive !== null && fullDaysEnd !== endExclusive) {
    terms.push(countWhere(eventWhere(merchantId, names, ts(fullDaysEnd), ts(end))));
  }
  return sql`(${sql.join(terms, sql` + `)})`;
}

/**
 * The count behind the access check: its subqueries are InitPlans, which PostgreSQL runs only
 * when the merchant row is found, so another partner's merchant costs one index probe.
 */
function countQuery(partnerId: string, merchantId: string, filters: Filters): SQL {
  return sql`select exists (select 1 from tags where tags.merchant_id = m.id) as tagged,
      ${totalExpression(merchantId, filters)}::float8 as total
    from merchants m where m.id = ${merchantId}::uuid and m.partner_id = ${partnerId}::uuid`;
}

const ISO = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/**
 * The page. The order always ends in the event id, so rows sharing a time (or a name) keep one
 * order and pages never skip or repeat.
 * - First page, at most one name: one index scan in order, stopping after `limit` rows.
 * - Deeper pages: a deferred join. The keys of the page are found by an index-only scan (OFFSET
 *   skips index entries, not heap rows), then only the page's rows are fetched by primary key.
 * - Several names: PostgreSQL 15 cannot read `event_name IN (...)` in index order, so each name
 *   reads its first offset+limit keys from the (merchant, name, time, id) index and the per-name
 *   runs are merged (Merge Append), instead of sorting every matching row.
 */
function dataQuery(merchantId: string, params: ListEventsParams, { names, start, end }: Filters): SQL {
  const dir = sql.raw(params.sortOrder === 'asc' ? 'asc' : 'desc');
  const keyCols = params.sortBy === 'event_name' ? ['event_name', 'event_time', 'id'] : ['event_time', 'id'];
  const order = (prefix = '') =>
    sql.join(
      keyCols.map((col) => sql`${sql.raw(`${prefix}${col}`)} ${dir}`),
      sql`, `,
    );
  const offset = (params.page - 1) * params.limit;
  const from = start && ts(start);
  const to = end && ts(end);
  if (names.length <= 1 && offset === 0) {
    // ORDER BY names the table's columns: the output column `event_time` is the ISO text, and
    // ordering by it would sort every matching row instead of reading the index in order.
    return sql`select id, muid, event_name, to_char(event_time at time zone 'UTC', ${ISO}) as event_time, raw_data
      from events where ${eventWhere(merchantId, names, from, to)}
      order by ${order('events.')} limit ${params.limit}`;
  }
  const cols = sql.raw(keyCols.join(', '));
  const keys =
    names.length <= 1
      ? sql`select ${cols} from events where ${eventWhere(merchantId, names, from, to)}
          order by ${order()} limit ${params.limit} offset ${offset}`
      : sql`select ${cols} from (${sql.join(
          names.map(
            (name) =>
              sql`(select ${cols} from events where ${eventWhere(merchantId, [name], from, to)}
                order by ${order()} limit ${offset + params.limit})`,
          ),
          sql` union all `,
        )}) runs order by ${order()} limit ${params.limit} offset ${offset}`;
  return sql`select e.id, e.muid, e.event_name, to_char(e.event_time at time zone 'UTC', ${ISO}) as event_time, e.raw_data
    from (${keys}) k join events e on e.merchant_id = ${merchantId}::uuid and e.id = k.id
    order by ${order('k.')}`;
}

/** Validates the filters (400 on bad input) and builds the page and count queries. */
export function planEventList(partnerId: string, params: ListEventsParams): EventListPlan {
  const filters = parseFilters(params);
  return {
    data: dataQuery(params.merchantId, params, filters),
    count: countQuery(partnerId, params.merchantId, filters),
  };
}

/** The plan as SQL text and parameters (what the bench runs directly over postgres.js). */
export function eventListQueries(partnerId: string, params: ListEventsParams): { data: Query; count: Query } {
  const plan = planEventList(partnerId, params);
  return { data: toQuery(plan.data), count: toQuery(plan.count) };
}

/**
 * One page of a merchant's events: two statements in parallel, the page and the access check with
 * the count; the page is dropped unless the merchant is the partner's and has a tag.
 */
export async function listEvents(
  db: Database,
  partner: AuthenticatedPartner,
  params: ListEventsParams,
): Promise<ListEventsResponse> {
  const plan = planEventList(partner.id, params);
  const [countRows, dataRows] = await readRows(db, [plan.count, plan.data]);
  const [access] = countRows ?? [];
  if (!access) throw new AppError('MERCHANT_NOT_FOUND', `No merchant ${params.merchantId} under this partner`);
  if (!access.tagged) {
    throw new AppError('MERCHANT_NOT_FOUND', `Merchant ${params.merchantId} has no tag integration yet`);
  }
  const total = Number(access.total ?? 0);
  return {
    events: (dataRows ?? []).map((row) => ({
      id: row.id as string,
      muid: row.muid as string,
      event_name: row.event_name as string,
      event_time: row.event_time as string,
      raw_data: row.raw_data as string,
    })),
    pagination: buildPagination(params.page, params.limit, total),
  };
}
