import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/client.js';
import { rowsOf } from '../src/db/read-rows.js';
import { storeEvents } from '../src/features/events/ingest/store-events.js';
import {
  createPartitionsAhead,
  deletePartitionIds,
  monthlyPartitions,
  truncateExpiredPartitions,
} from '../src/features/events/partitions/event-partitions.js';
import { eventListResponse, type ListEventsParams, planEventList } from '../src/features/events/read/list-events.js';
import { StatsStore } from '../src/features/stats/store.js';
import { createLogger } from '../src/kernel/logger.js';
import { testDataDir } from '../src/testing/test-app-env.js';
import { migratedUpTo, type PartlyMigrated } from './helpers/migrate-to.js';

// Migration 0028 (docs/decisions/events-partitioning.md) on a populated table, on the suite's
// database (PGlite, or TEST_DATABASE_URL): rows seeded on the old shape, the migration applied,
// then the same rows, the same list pages and cursors, and pruning visible in EXPLAIN.

const cursorKey = Buffer.alloc(32, 7);
const partnerId = randomUUID();
const merchantId = randomUUID();
const otherMerchant = randomUUID();
const tagId = randomUUID();

let database: PartlyMigrated;
let db: Database;

/** Event times over 30 months, several per instant, plus the far past and the far future. */
function seedTimes(): string[] {
  const times: string[] = [];
  const start = Date.UTC(2024, 0, 1);
  for (let i = 0; i < 600; i++) times.push(new Date(start + Math.floor(i / 2) * 3.1 * 86_400_000).toISOString());
  times.push('0001-01-01T00:00:00.000Z', '1999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z');
  times.push(new Date().toISOString());
  return times;
}

async function rows<T = Record<string, unknown>>(query: ReturnType<typeof sql>): Promise<T[]> {
  return rowsOf<T>(await db.execute(query));
}

/** Every page of one list, walked by cursor, and pages 1-3 by offset. */
async function walk(params: Omit<ListEventsParams, 'merchantId' | 'page' | 'limit'>): Promise<unknown[]> {
  const pages: unknown[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 100; n++) {
    const base: ListEventsParams = { merchantId, page: 1, limit: 37, ...params, cursor };
    const plan = planEventList(partnerId, base, cursorKey);
    const page = eventListResponse(plan, 37, await rows(plan.data), 0, cursorKey);
    pages.push(page.events);
    cursor = page.pagination.nextCursor ?? undefined;
    if (!cursor) break;
  }
  for (const page of [2, 3]) {
    const plan = planEventList(partnerId, { merchantId, page, limit: 37, ...params }, cursorKey);
    pages.push(await rows(plan.data));
  }
  return pages;
}

const lists: Omit<ListEventsParams, 'merchantId' | 'page' | 'limit'>[] = [
  { sortBy: 'event_time', sortOrder: 'desc' },
  { sortBy: 'event_time', sortOrder: 'asc' },
  { sortBy: 'event_name', sortOrder: 'asc' },
  { sortBy: 'event_time', sortOrder: 'desc', events: 'Purchase' },
  { sortBy: 'event_time', sortOrder: 'desc', events: 'PageView,Purchase' },
  { sortBy: 'event_time', sortOrder: 'asc', startDate: '2024-06-10', endDate: '2025-02-03' },
];

const before: unknown[][] = [];
let storedBefore: unknown[];

const allRows = sql`select merchant_id::text, id, tag_id::text, muid, event_name,
  to_char(event_time at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') as t, raw_data, received_at::text, seq::text, consent::text
  from events order by merchant_id, id`;

beforeAll(async () => {
  database = await migratedUpTo('0027_stat_rollups');
  db = database.db;
  await db.execute(
    sql`insert into partners (id, name, domain, record_name) values (${partnerId}::uuid, 'p', 'p.example', 'r')`,
  );
  await db.execute(sql`insert into merchants (id, partner_id, name) values (${merchantId}::uuid, ${partnerId}::uuid, 'm'),
    (${otherMerchant}::uuid, ${partnerId}::uuid, 'o')`);
  const times = seedTimes();
  const payload = JSON.stringify(
    times.flatMap((time, i) => [
      { m: merchantId, id: `e${i}`, name: ['PageView', 'Purchase', 'AddToCart'][i % 3], time, muid: `v${i % 17}` },
      { m: otherMerchant, id: `e${i}`, name: 'PageView', time, muid: 'w' },
    ]),
  );
  // The insert path of the old shape (the seq trigger numbers them).
  await db.execute(sql`
    insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
    select m, id, ${tagId}::uuid, muid, name, time, '{"n":1}'
    from json_to_recordset(${payload}::json) as x(m uuid, id text, name text, time timestamptz, muid text)`);
  storedBefore = await rows(allRows);
  for (const list of lists) before.push(await walk(list));
  await database.finish();
}, 120_000);

afterAll(() => database?.close());

describe('migration 0028 on a populated events table', () => {
  it('keeps every row once, and every id in event_ids', async () => {
    expect(storedBefore.length).toBe(2 * seedTimes().length);
    expect(await rows(allRows)).toEqual(storedBefore);
    const [ids] = await rows<{ n: number; distinct: number }>(
      sql`select count(*)::int as n, count(distinct (merchant_id, id))::int as distinct from event_ids`,
    );
    expect(ids).toEqual({ n: storedBefore.length, distinct: storedBefore.length });
  });

  it('makes events a partitioned table: monthly partitions, the far past and future in two catch-alls', async () => {
    const [kind] = await rows<{ relkind: string }>(sql`select relkind::text from pg_class where relname = 'events'`);
    expect(kind?.relkind).toBe('p');
    const parts = await rows<{ name: string; n: number }>(sql`
      select c.relname as name, (select count(*)::int from events e where e.tableoid = c.oid) as n
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'events'::regclass order by c.relname`);
    const names = parts.map((p) => p.name);
    expect(names).toContain('events_before');
    expect(names).toContain('events_after');
    expect(names).toContain('events_p2024_01');
    expect(names).toContain('events_p2026_06');
    // This month and three ahead.
    const now = new Date();
    const ahead = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 3, 1));
    expect(names).toContain(`events_p${ahead.getUTCFullYear()}_${String(ahead.getUTCMonth() + 1).padStart(2, '0')}`);
    // The far past and far future: 2 and 1 times of each merchant.
    expect(parts.find((p) => p.name === 'events_before')?.n).toBe(4);
    expect(parts.find((p) => p.name === 'events_after')?.n).toBe(2);
  });

  it('answers the same list pages and cursors as before', async () => {
    for (const [i, list] of lists.entries()) expect(await walk(list), JSON.stringify(list)).toEqual(before[i]);
  });

  it('keeps the triggers: an insert without seq is numbered after the others', async () => {
    await db.execute(sql`
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      values (${merchantId}::uuid, 'late', ${tagId}::uuid, 'v', 'PageView', '2024-03-05T00:00:00Z', '{}')`);
    const [row] = await rows<{ seq: number; max: number }>(sql`
      select (select seq from events where merchant_id = ${merchantId}::uuid and id = 'late')::int as seq,
        (select max(seq) from events where merchant_id = ${merchantId}::uuid and id <> 'late')::int as max`);
    expect(row?.seq).toBeGreaterThan(row?.max ?? 0);
  });
});

/** The partitions a statement's plan reads (EXPLAIN, plan-time and run-time pruning both). */
async function partitionsRead(query: ReturnType<typeof sql>): Promise<string[]> {
  const plan = (await rows<Record<string, string>>(sql`explain (analyze, costs off, timing off, summary off) ${query}`))
    .map((row) => Object.values(row)[0])
    .join('\n');
  if (process.env.SHOW_PLANS) console.log(plan);
  const read = new Set<string>();
  // A subplan pruned at run time shows "(never executed)"; one pruned at plan time is absent.
  for (const line of plan.split('\n')) {
    const match = /on (events_(?:p\d{4}_\d{2}|before|after))\b/.exec(line);
    if (match?.[1] && !line.includes('never executed')) read.add(match[1]);
  }
  return [...read].sort();
}

describe('pruning to the months a query needs', () => {
  it('a date range reads its months only', async () => {
    const plan = planEventList(
      partnerId,
      {
        merchantId,
        page: 1,
        limit: 20,
        sortBy: 'event_time',
        sortOrder: 'asc',
        startDate: '2024-06-10',
        endDate: '2024-08-03',
      },
      cursorKey,
    );
    expect(await partitionsRead(plan.data)).toEqual(['events_p2024_06', 'events_p2024_07', 'events_p2024_08']);
    // The count: whole days from event_day_counts, partial ones from their month; whether the
    // merchant has any event (`tagged`) stops at its first row, in the oldest partition.
    const counted = await partitionsRead(plan.count);
    expect(
      counted.filter((name) => name !== 'events_before' && (name < 'events_p2024_06' || name > 'events_p2024_08')),
    ).toEqual([]);
  });

  it('a cursor page opens no month after its cursor', async () => {
    const first = planEventList(
      partnerId,
      { merchantId, page: 1, limit: 20, sortBy: 'event_time', sortOrder: 'desc', endDate: '2025-03-20' },
      cursorKey,
    );
    const page = eventListResponse(first, 20, await rows(first.data), 0, cursorKey);
    const next = planEventList(
      partnerId,
      {
        merchantId,
        page: 1,
        limit: 20,
        sortBy: 'event_time',
        sortOrder: 'desc',
        endDate: '2025-03-20',
        cursor: page.pagination.nextCursor ?? '',
      },
      cursorKey,
    );
    const read = await partitionsRead(next.data);
    // (On a large table the months are also read in order, an ordered Append, and the page stops in
    // the cursor's month or the one before: docs/decisions/events-partitioning.md.)
    expect(read.length).toBeGreaterThan(0);
    expect(read.filter((name) => name > 'events_p2025_03' && name !== 'events_before')).toEqual([]);
  });

  it('a deep offset page fetches its rows from their months only', async () => {
    const plan = planEventList(
      partnerId,
      {
        merchantId,
        page: 3,
        limit: 10,
        sortBy: 'event_time',
        sortOrder: 'desc',
        startDate: '2025-01-01',
        endDate: '2025-04-30',
      },
      cursorKey,
    );
    const read = await partitionsRead(plan.data);
    expect(read.every((name) => name >= 'events_p2025_01' && name <= 'events_p2025_04')).toBe(true);
  });
});

describe('idempotency by (merchant_id, id) across months', () => {
  it('skips a retry whose event_time is in another month', async () => {
    const row = { merchantId, tagId, id: 'retry-1', muid: 'v', eventName: 'PageView', rawData: '{}' };
    const first = await storeEvents(db, [{ ...row, eventTime: '2024-02-10T10:00:00.000Z' }]);
    expect(first.get(tagId)).toBe(1);
    const retried = await storeEvents(db, [
      { ...row, eventTime: new Date().toISOString() },
      { ...row, id: 'retry-2', eventTime: '2024-02-11T10:00:00.000Z' },
    ]);
    expect(retried.get(tagId)).toBe(1);
    const stored = await rows<{ id: string; t: string }>(sql`
      select id, to_char(event_time at time zone 'UTC', 'YYYY-MM') as t from events
      where merchant_id = ${merchantId}::uuid and id like 'retry-%' order by id`);
    expect(stored).toEqual([
      { id: 'retry-1', t: '2024-02' },
      { id: 'retry-2', t: '2024-02' },
    ]);
  });
});

describe('the statistics outbox', () => {
  it('records a merchant range per statement; the recovery sends it from the months it spans', async () => {
    const stats = await StatsStore.open(
      { kind: 'chdb', path: path.join(testDataDir(), 'clickhouse'), database: `parts_${randomUUID().slice(0, 8)}` },
      db,
      createLogger({ LOG_LEVEL: 'silent' }),
    );
    try {
      const event = { tagId, muid: 'v', eventName: 'PageView', rawData: '{}' };
      // Stored by a process that stopped before sending them: their outbox rows stay behind.
      const stopped = { record: () => {} };
      await storeEvents(
        db,
        [
          { ...event, merchantId, id: 'outbox-1', eventTime: '2024-03-03T00:00:00.000Z' },
          { ...event, merchantId, id: 'outbox-2', eventTime: '2024-04-04T00:00:00.000Z' },
          { ...event, merchantId: otherMerchant, id: 'outbox-3', eventTime: '2024-04-05T00:00:00.000Z' },
        ],
        stopped,
      );
      const ranges = await rows<{ merchant: string; n: number }>(sql`
        select o.merchant_id::text as merchant, (select count(*)::int from events e
          where e.merchant_id = o.merchant_id and e.seq between o.first_seq and o.last_seq) as n
        from stats_outbox o order by o.first_seq`);
      expect(ranges.sort((x, y) => x.merchant.localeCompare(y.merchant))).toEqual(
        [
          { merchant: merchantId, n: 2 },
          { merchant: otherMerchant, n: 1 },
        ].sort((x, y) => x.merchant.localeCompare(y.merchant)),
      );
      await db.execute(sql`update stats_outbox set claimed_until = now() - interval '1 second'`);
      expect(await stats.recover()).toBe(2);
      expect(await rows(sql`select 1 from stats_outbox`)).toEqual([]);
      const counted = async (id: string) => {
        const points = await stats.points('test', {
          merchantId: id,
          start: Date.UTC(2024, 2, 1),
          end: Date.UTC(2024, 4, 1),
          names: [],
          filters: [],
          cut: { splitAt: Date.UTC(2024, 3, 1) },
        });
        return [points.get('0')?.events ?? 0, points.get('1')?.events ?? 0];
      };
      expect(await counted(merchantId)).toEqual([1, 1]);
      expect(await counted(otherMerchant)).toEqual([0, 1]);
    } finally {
      await stats.close();
    }
  });
});

describe('partitions made ahead', () => {
  it('creates the coming months, moving rows events_after held for them', async () => {
    const later = new Date();
    later.setUTCDate(1);
    later.setUTCMonth(later.getUTCMonth() + 5);
    await db.execute(sql`
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      values (${merchantId}::uuid, 'skewed', ${tagId}::uuid, 'v', 'PageView', ${later.toISOString()}::timestamptz, '{}')`);
    const name = `events_p${later.getUTCFullYear()}_${String(later.getUTCMonth() + 1).padStart(2, '0')}`;
    const [before] = await rows<{ t: string }>(
      sql`select tableoid::regclass::text as t from events where id = 'skewed'`,
    );
    expect(before?.t).toBe('events_after');
    const created = await createPartitionsAhead(db, 6);
    expect(created).toContain(name);
    const [after] = await rows<{ t: string }>(
      sql`select tableoid::regclass::text as t from events where id = 'skewed'`,
    );
    expect(after?.t).toBe(name);
    expect(await createPartitionsAhead(db, 6)).toEqual([]);
  });
});

/** Events without their id in event_ids, and ids without their event. */
async function orphans() {
  const [row] = await rows<{ withoutId: number; withoutEvent: number }>(sql`
    select
      (select count(*)::int from events e
        where not exists (select 1 from event_ids i where i.merchant_id = e.merchant_id and i.id = e.id)) as "withoutId",
      (select count(*)::int from event_ids i
        where not exists (select 1 from events e where e.merchant_id = i.merchant_id and e.id = i.id)) as "withoutEvent"`);
  return row;
}

describe('retention dropping whole months', () => {
  it('keeps every month while one merchant with rows in it keeps its events', async () => {
    await db.execute(sql`update merchants set retention_days = 30 where id = ${merchantId}::uuid`);
    expect(await truncateExpiredPartitions(db, { serverDays: undefined })).toEqual([]);
    // Removing a month's ids leaves those of the merchants that keep it (otherMerchant: no period),
    // and takes those of the others (merchantId is 30 days past it; its rows go with the month, or
    // with its own retention pass).
    const before = await orphans();
    const [first] = await monthlyPartitions(db);
    expect(first?.name).toBe('events_p2024_01');
    const [past] = await rows<{ n: number }>(
      sql`select count(*)::int as n from events_p2024_01 where merchant_id = ${merchantId}::uuid`,
    );
    expect(past?.n).toBeGreaterThan(7);
    if (first) expect(await deletePartitionIds(db, first, undefined, 7)).toBe(past?.n);
    expect(await orphans()).toEqual({ withoutId: (before?.withoutId ?? 0) + (past?.n ?? 0), withoutEvent: 0 });
  });

  it('empties the months every merchant is past, and their day counts; later ones stay', async () => {
    // A merchant without a period but without rows in those months does not hold them.
    await db.execute(sql`insert into merchants (partner_id, name) values (${partnerId}::uuid, 'keeps all, has none')`);
    await db.execute(sql`update merchants set retention_days = 400 where id = ${otherMerchant}::uuid`);
    const cutoff = Date.now() - 400 * 86_400_000;
    const months = await monthlyPartitions(db);
    const expected = months.filter((m) => m.to.getTime() <= cutoff).map((m) => m.name);
    expect(expected).toContain('events_p2024_01');
    const [kept] = await rows<{ n: number }>(sql`
      select count(*)::int as n from events where event_time >= ${months.find((m) => !expected.includes(m.name))?.from.toISOString()}::timestamptz
        or tableoid in ('events_before'::regclass, 'events_after'::regclass)`);
    expect(await truncateExpiredPartitions(db, { serverDays: undefined, idsBatch: 7 })).toEqual(expected);
    const [after] = await rows<{ n: number }>(sql`select count(*)::int as n from events`);
    expect(after?.n).toBe(kept?.n);
    // The emptied months' ids went first (walked in batches); the ids left all have their event.
    expect((await orphans())?.withoutEvent).toBe(0);
    const [counts] = await rows<{ n: number }>(
      sql`select count(*)::int as n from event_day_counts where day < '2024-02-01'::date and day >= '2024-01-01'::date`,
    );
    expect(counts?.n).toBe(0);
    const [other] = await rows<{ n: number }>(
      sql`select count(*)::int as n from event_day_counts where day >= '2026-01-01'::date`,
    );
    expect(other?.n).toBeGreaterThan(0);
    // Emptied, still attached: a late event of that month has a place.
    await storeEvents(db, [
      {
        merchantId,
        tagId,
        id: 'late-2024',
        muid: 'v',
        eventName: 'PageView',
        rawData: '{}',
        eventTime: '2024-01-15T00:00:00.000Z',
      },
    ]);
    const [late] = await rows<{ t: string }>(
      sql`select tableoid::regclass::text as t from events where id = 'late-2024'`,
    );
    expect(late?.t).toBe('events_p2024_01');
  });
});
