import {
  buildPagination,
  type EventConsent,
  EventNamesFilter,
  INSTANT_RANGE_MESSAGE,
  type ListEventsResponse,
  MAX_INSTANT_MS,
  parseDateBound,
} from '@partner/shared-schemas';
import { type Query, type SQL, sql } from 'drizzle-orm';
import type { PrimaryCheck, ReadDb } from '../../../db/read-routing.js';
import { type Row, readRows, toQuery } from '../../../db/read-rows.js';
import { AppError } from '../../../kernel/errors.js';
import type { AuthenticatedPartner } from '../../partners/authenticate.js';
import { type CursorBinding, type CursorPosition, decodeCursor, encodeCursor } from './cursor.js';

export interface ListEventsParams {
  merchantId: string;
  page: number;
  limit: number;
  sortOrder: 'asc' | 'desc';
  sortBy: 'event_time' | 'event_name';
  events?: string | undefined;
  /** Only this visitor's events. */
  muid?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
  /** A `nextCursor` of an earlier page of the same list: keyset paging from there (`page` is ignored). */
  cursor?: string | undefined;
}

/** The SQL one event-list request runs, all of it; the bench runs exactly these. */
export interface EventListPlan {
  /** The page: columns id, muid, event_name, event_time (ISO 8601 text), raw_data, consent, in order. */
  data: SQL;
  /** The access check and the count: one row when the merchant is the partner's, with `tagged` and `total`. */
  count: SQL;
  /** The page this request opens: `page`, or the page number carried by the cursor. */
  page: number;
  /** What cursors of this list are bound to. */
  binding: CursorBinding;
}

interface Filters {
  names: string[];
  /** One visitor's events only (the (merchant_id, muid, event_time, id) index); null: every visitor. */
  muid: string | null;
  start: Date | null;
  end: Date | null;
}

const DAY_MS = 86_400_000;
/** The last instant PostgreSQL and `Date.toISOString()` agree on (year 9999); no bound goes past it. */
const MAX_INSTANT = MAX_INSTANT_MS;

function parseFilters(params: ListEventsParams): Filters {
  const filter = EventNamesFilter.safeParse(params.events);
  if (!filter.success) throw new AppError('VALIDATION_ERROR', `events: ${filter.error.issues[0]?.message}`);
  const names = filter.data;
  const start = params.startDate ? parseDateBound(params.startDate, 'start') : null;
  const end = params.endDate ? parseDateBound(params.endDate, 'end') : null;
  // The schema refuses these first; a caller that skipped it must not get an unfiltered list.
  if ((params.startDate && !start) || (params.endDate && !end)) {
    throw new AppError('VALIDATION_ERROR', `startDate and endDate ${INSTANT_RANGE_MESSAGE}`);
  }
  if (start && end && start > end) {
    throw new AppError('VALIDATION_ERROR', 'startDate must not be after endDate');
  }
  return { names, muid: params.muid ?? null, start, end };
}

const ts = (instant: Date | number) => sql`${new Date(instant).toISOString()}::timestamptz`;
const day = (instant: number) => sql`${new Date(instant).toISOString().slice(0, 10)}::date`;
const nameList = (names: string[]) =>
  sql.join(
    names.map((name) => sql`${name}`),
    sql`, `,
  );

/** `merchant_id = ... [and muid = ...] [and event_name ...] [and event_time in range]`, on the events table. */
function eventWhere(
  merchantId: string,
  names: string[],
  from: SQL | null,
  to: SQL | null,
  toInclusive = true,
  muid: string | null = null,
): SQL {
  const parts: SQL[] = [sql`merchant_id = ${merchantId}::uuid`];
  if (muid !== null) parts.push(sql`muid = ${muid}`);
  if (names.length === 1) parts.push(sql`event_name = ${names[0]}`);
  else if (names.length > 1) parts.push(sql`event_name in (${nameList(names)})`);
  if (from) parts.push(sql`event_time >= ${from}`);
  if (to) parts.push(toInclusive ? sql`event_time <= ${to}` : sql`event_time < ${to}`);
  return sql.join(parts, sql` and `);
}

/** The ownership gate of every statement that reads a merchant's events. */
export function ownedMerchant(partnerId: string, merchantId: string): SQL {
  return sql`exists (select 1 from merchants where merchants.id = ${merchantId}::uuid and merchants.partner_id = ${partnerId}::uuid and merchants.deleted_at is null)`;
}

/** What a replica may not decide alone for a read of the merchant's events. */
export function merchantOnPrimary(partnerId: string, merchantId: string): PrimaryCheck {
  return async (primary, recentMs) => {
    const [rows = []] = await readRows(primary, [
      sql`select ${ownedMerchant(partnerId, merchantId)} as owned,
        exists (select 1 from erasures where partner_id = ${partnerId}::uuid and completed_at is not null
          and completed_at > now() - make_interval(secs => ${recentMs / 1000})
          and (merchant_id = ${merchantId}::uuid or merchant_id is null)) as erased`,
    ]);
    if (rows[0]?.owned !== true) {
      throw new AppError('MERCHANT_NOT_FOUND', `No merchant ${merchantId} under this partner`);
    }
    return rows[0]?.erased === true;
  };
}

const countWhere = (where: SQL) => sql`(select count(*) from events where ${where})`;

/** Exact total without counting every matching row. A range without a whole day is counted directly. */
function totalExpression(merchantId: string, { names, muid, start, end }: Filters): SQL {
  // One visitor's events: counted directly (the day counts are not per visitor; the muid index is).
  if (muid !== null) return countWhere(eventWhere(merchantId, names, start && ts(start), end && ts(end), true, muid));
  const startMs = start?.getTime() ?? null;
  // End bounds are inclusive at millisecond precision (event times are stored with 3 digits).
  const endExclusive = end && end.getTime() < MAX_INSTANT ? end.getTime() + 1 : null;
  const firstFullDay = startMs === null ? null : Math.ceil(startMs / DAY_MS) * DAY_MS;
  const fullDaysEnd = endExclusive === null ? null : Math.floor(endExclusive / DAY_MS) * DAY_MS;
  if (firstFullDay !== null && fullDaysEnd !== null && firstFullDay >= fullDaysEnd) {
    return sql`${countWhere(eventWhere(merchantId, names, start && ts(start), end && ts(end)))}`;
  }
  const dayCounts: SQL[] = [sql`merchant_id = ${merchantId}::uuid`];
  if (names.length > 0) dayCounts.push(sql`event_name in (${nameList(names)})`);
  if (firstFullDay !== null) dayCounts.push(sql`day >= ${day(firstFullDay)}`);
  if (fullDaysEnd !== null) dayCounts.push(sql`day < ${day(fullDaysEnd)}`);
  const terms: SQL[] = [
    sql`coalesce((select sum(n) from event_day_counts where ${sql.join(dayCounts, sql` and `)}), 0)`,
  ];
  if (start && firstFullDay !== null && firstFullDay !== start.getTime()) {
    terms.push(countWhere(eventWhere(merchantId, names, ts(start), ts(firstFullDay), false)));
  }
  if (end && fullDaysEnd !== null && endExclusive !== null && fullDaysEnd !== endExclusive) {
    terms.push(countWhere(eventWhere(merchantId, names, ts(fullDaysEnd), ts(end))));
  }
  return sql`(${sql.join(terms, sql` + `)})`;
}

/** The count behind the access check. */
export function countQuery(partnerId: string, merchantId: string, filters: Filters): SQL {
  // A merchant whose tags were deleted keeps its events readable (docs/decisions/data-deletion.md).
  return sql`select (exists (select 1 from tags where tags.merchant_id = m.id)
        or exists (select 1 from events where events.merchant_id = m.id)) as tagged,
      ${totalExpression(merchantId, filters)}::float8 as total
    from merchants m where m.id = ${merchantId}::uuid and m.partner_id = ${partnerId}::uuid and m.deleted_at is null`;
}

const ISO = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/**
 * The page, plus one row: the extra row says whether a next page exists (`nextCursor`). The order
 * always ends in the event id, so rows sharing a time (or a name) keep one order and pages never
 * skip or repeat.
 * - First page or a cursor, at most one name: one index scan in order, from the cursor's key when
 *   there is one (keyset: `(event_time, id) < (...)` on the (merchant, [name,] time, id) index),
 *   stopping after `limit + 1` rows. Every cursor page costs the same, whatever its depth.
 * - Deeper offset pages: a deferred join. The keys of the page are found by an index-only scan
 *   (OFFSET skips index entries, not heap rows), then only the page's rows are fetched by key.
 * - Several names: PostgreSQL 15 cannot read `event_name IN (...)` in index order, so each name
 *   reads its first offset+limit+1 entries from the (merchant, name, time, id) index and the
 *   per-name runs are merged (Merge Append), instead of sorting every matching row. On the first
 *   page or from a cursor the runs read whole rows (one heap fetch per row taken); on deeper offset
 *   pages they read keys only, and the deferred join fetches the page's rows.
 */
/** What a page row holds: the five fields. */
type RowShape = 'fields' | 'line';

function selectList(shape: RowShape, prefix: '' | 'e.' | 'r.'): SQL {
  const col = (name: string) => sql.raw(`${prefix}${name}`);
  if (shape === 'fields') {
    const time = sql`to_char(${col('event_time')} at time zone 'UTC', ${ISO})`;
    return sql`${col('id')}, ${col('muid')}, ${col('event_name')}, ${time} as event_time, ${col('raw_data')}, ${col('consent')}`;
  }
  return sql`${eventJson(prefix)} as line`;
}

/** `JSON.stringify` of the event as the list gives it, written by PostgreSQL from the columns of `events`. */
export function eventJson(prefix: '' | 'e.' | 'r.', seq?: SQL): SQL {
  const col = (name: string) => sql.raw(`${prefix}${name}`);
  const time = sql`to_char(${col('event_time')} at time zone 'UTC', ${ISO})`;
  const start = seq ? sql`'{"seq":' || ${seq}::text || ',"id":'` : sql`'{"id":'`;
  // The consent values are plain ASCII words: no escaping.
  return sql`${start} || to_json(${col('id')})::text || ',"muid":' || to_json(${col('muid')})::text
    || ',"event_name":' || to_json(${col('event_name')})::text || ',"event_time":"' || ${time}
    || '","raw_data":' || to_json(${col('raw_data')})::text || ',"consent":"' || ${col('consent')}::text || '"}'`;
}

export function dataQuery(
  partnerId: string,
  merchantId: string,
  params: Pick<ListEventsParams, 'sortBy' | 'sortOrder' | 'limit' | 'page'>,
  { names, muid, start, end }: Filters,
  position: CursorPosition | null,
  shape: RowShape = 'fields',
): SQL {
  const desc = params.sortOrder !== 'asc';
  const dir = sql.raw(desc ? 'desc' : 'asc');
  const cmp = sql.raw(desc ? '<' : '>');
  const byName = params.sortBy === 'event_name';
  const keyCols = byName ? ['event_name', 'event_time', 'id'] : ['event_time', 'id'];
  const order = (prefix = '') =>
    sql.join(
      keyCols.map((col) => sql`${sql.raw(`${prefix}${col}`)} ${dir}`),
      sql`, `,
    );
  const take = params.limit + 1;
  const offset = position ? 0 : (params.page - 1) * params.limit;
  const from = start && ts(start);
  const to = end && ts(end);
  const where = (branch: string[], ...more: SQL[]) =>
    sql.join([eventWhere(merchantId, branch, from, to, true, muid), ...more], sql` and `);
  // Keyset conditions: rows strictly after the cursor's row in the list's order.
  const afterTimeId = position
    ? sql`(event_time, id) ${cmp} (${position.time}::timestamptz, ${position.id}) and event_time ${cmp}= ${position.time}::timestamptz`
    : null;
  if (names.length <= 1 && offset === 0) {
    const after: SQL[] = [];
    if (position && byName && names.length === 0) {
      after.push(
        sql`(event_name, event_time, id) ${cmp} (${position.name ?? ''}, ${position.time}::timestamptz, ${position.id})`,
      );
    } else if (afterTimeId) {
      // One name (or none, by time): the name is fixed, so (time, id) orders the rows.
      after.push(afterTimeId);
    }
    // ORDER BY names the table's columns: the output column `event_time` is the ISO text, and
    // ordering by it would sort every matching row instead of reading the index in order.
    return sql`select ${selectList(shape, '')}
      from events where ${where(names, ...after)} and ${ownedMerchant(partnerId, merchantId)}
      order by ${order('events.')} limit ${take}`;
  }
  // Several names, first page or a cursor: each run reads whole rows straight from its index scan; a deferred join
  // would walk the primary key once per row, which is what grows with the table.
  const cols = sql.raw(offset === 0 ? 'id, muid, event_name, event_time, raw_data, consent' : keyCols.join(', '));
  const run = (name: string, ...more: SQL[]) =>
    sql`(select ${cols} from events where ${where([name], ...more)} order by ${order()} limit ${offset + take})`;
  const branches: SQL[] = [];
  for (const name of names) {
    if (!position || !byName) {
      branches.push(afterTimeId ? run(name, afterTimeId) : run(name));
      continue;
    }
    // By name from a cursor: the cursor's own name continues after its (time, id); names after it in the list's order
    // are read from their start, names before it not at all.
    const cursorName = position.name ?? '';
    branches.push(run(name, afterTimeId as SQL, sql`${name}::text = ${cursorName}::text`));
    branches.push(run(name, sql`${name}::text ${cmp} ${cursorName}::text`));
  }
  if (offset === 0) {
    return sql`select ${selectList(shape, 'r.')}
      from (${sql.join(branches, sql` union all `)}) r
      where ${ownedMerchant(partnerId, merchantId)}
      order by ${order('r.')} limit ${take}`;
  }
  const keys =
    names.length <= 1
      ? sql`select ${cols} from events where ${where(names)}
          order by ${order()} limit ${take} offset ${offset}`
      : sql`select ${cols} from (${sql.join(branches, sql` union all `)}) runs order by ${order()} limit ${take} offset ${offset}`;
  return sql`select ${selectList(shape, 'e.')}
    from (${keys}) k join events e on e.merchant_id = ${merchantId}::uuid and e.id = k.id and e.event_time = k.event_time
    where ${ownedMerchant(partnerId, merchantId)}
    order by ${order('k.')}`;
}

/** The list's filters, validated (400 on bad input). */
export { parseFilters as parseEventFilters };

/** What the list's cursors are bound to: the partner, the merchant, the sort and the filters. */
export function bindingOf(partnerId: string, params: ListEventsParams, filters: Filters): CursorBinding {
  return {
    partnerId,
    merchantId: params.merchantId,
    sortBy: params.sortBy,
    sortOrder: params.sortOrder,
    names: filters.names,
    muid: filters.muid,
    start: filters.start,
    end: filters.end,
  };
}

/** Validates the filters and the cursor and builds the page and count queries. */
export function planEventList(partnerId: string, params: ListEventsParams, cursorKey: Buffer): EventListPlan {
  const filters = parseFilters(params);
  const binding = bindingOf(partnerId, params, filters);
  const position = params.cursor ? decodeCursor(cursorKey, binding, params.cursor) : null;
  return {
    data: dataQuery(partnerId, params.merchantId, params, filters, position),
    count: countQuery(partnerId, params.merchantId, filters),
    page: position?.page ?? params.page,
    binding,
  };
}

/** The plan as SQL text and parameters (what the bench runs directly over postgres.js). */
export function eventListQueries(
  partnerId: string,
  params: ListEventsParams,
  cursorKey: Buffer,
): { data: Query; count: Query; page: number; binding: CursorBinding } {
  const plan = planEventList(partnerId, params, cursorKey);
  return { ...plan, data: toQuery(plan.data), count: toQuery(plan.count) };
}

/** The response for a page: at most `limit` events, the pagination with the exact total, and `nextCursor`. */
export function eventListResponse(
  plan: Pick<EventListPlan, 'page' | 'binding'>,
  limit: number,
  rows: readonly Row[],
  total: number,
  cursorKey: Buffer,
): ListEventsResponse {
  const count = Math.min(rows.length, limit);
  const events = new Array<ListEventsResponse['events'][number]>(count);
  for (let i = 0; i < count; i++) {
    const row = rows[i] as Row;
    events[i] = {
      id: row.id as string,
      muid: row.muid as string,
      event_name: row.event_name as string,
      event_time: row.event_time as string,
      raw_data: row.raw_data as string,
      consent: row.consent as EventConsent,
    };
  }
  const last = events[count - 1];
  const nextCursor =
    rows.length > limit && last
      ? encodeCursor(cursorKey, plan.binding, {
          page: plan.page + 1,
          time: last.event_time,
          id: last.id,
          name: plan.binding.sortBy === 'event_name' ? last.event_name : undefined,
        })
      : null;
  return {
    events,
    pagination: { ...buildPagination(plan.page, limit, total), hasNextPage: nextCursor !== null, nextCursor },
  };
}

/** One page of a merchant's events: two statements in parallel, the page and the access check with the count. */
export async function listEvents(
  reads: ReadDb,
  partner: AuthenticatedPartner,
  params: ListEventsParams,
  cursorKey: Buffer,
): Promise<ListEventsResponse> {
  const plan = planEventList(partner.id, params, cursorKey);
  // On a replica when one is healthy; a 404 there is checked on the primary (db/read-routing.ts).
  return reads.run(
    'events_list',
    async (db) => {
      const [countRows, dataRows] = await readRows(db, [plan.count, plan.data]);
      const [access] = countRows ?? [];
      if (!access) throw new AppError('MERCHANT_NOT_FOUND', `No merchant ${params.merchantId} under this partner`);
      if (!access.tagged) {
        throw new AppError('MERCHANT_NOT_FOUND', `Merchant ${params.merchantId} has no tag integration yet`);
      }
      return eventListResponse(plan, params.limit, dataRows ?? [], Number(access.total ?? 0), cursorKey);
    },
    { primaryCheck: merchantOnPrimary(partner.id, params.merchantId) },
  );
}
