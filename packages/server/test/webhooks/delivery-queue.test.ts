import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { webhookEndpoints } from '../../src/db/schema/index.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import {
  type ClaimedDelivery,
  type ClaimOptions,
  claimDueDeliveries,
  claimStatement,
} from '../../src/features/webhooks/delivery-queue.js';
import { openTestPglite, uniquePartnerDomain } from '../../src/testing/index.js';

// The delivery claim (features/webhooks/delivery-queue.ts) on the database the suite runs on
// (TEST_DATABASE_URL: PostgreSQL; else PGlite): which rows it takes beside a large backlog of one
// endpoint, and what it reads to take them (the rows its plan reads from webhook_deliveries, from
// EXPLAIN ANALYZE: a count, not a time). The claim that numbered every due row per endpoint took
// the same rows (the row tests pass on it) and read 10,038-10,040 rows here: the read test is the
// one it fails. No worker runs here: only these claims lease rows.
let database: DatabaseHandle;
let partnerId: string;
const LEASE_MS = 60_000;
const BACKLOG = 5_000;

beforeAll(async () => {
  const url = process.env.TEST_DATABASE_URL;
  database = url ? await openDatabase({ kind: 'postgres', url }) : await openTestPglite();
  partnerId = (await onboardPartner(database.db, { name: 'q', domain: uniquePartnerDomain() }, 'tags.example.com'))
    .partnerId;
});
afterAll(() => database?.close());
// Every test starts with no deliveries (messages cascade to them).
beforeEach(() => database.db.execute(sql`delete from webhook_messages`));

async function endpoint(options: { deleted?: boolean; previousSecretExpiresInS?: number } = {}): Promise<string> {
  const previous = options.previousSecretExpiresInS;
  const [row] = await database.db
    .insert(webhookEndpoints)
    .values({
      partnerId,
      url: 'https://example.com/hook',
      secret: 'whsec_current',
      previousSecret: previous === undefined ? null : 'whsec_previous',
      previousSecretExpiresAt: previous === undefined ? null : new Date(Date.now() + previous * 1000),
      deletedAt: options.deleted ? new Date() : null,
    })
    .returning({ id: webhookEndpoints.id });
  return row!.id;
}

/**
 * Pending deliveries of one endpoint, each a message whose data is `{ label }`: `label<i>` for i in
 * 1..count, due `firstDueS + (i - 1) * stepS` seconds from now (negative: due already).
 */
async function deliveries(endpointId: string, label: string, count: number, firstDueS: number, stepS = 1) {
  await database.db.execute(sql`
    with m as (
      insert into webhook_messages (partner_id, type, data)
      select ${partnerId}::uuid, 'webhook.test', jsonb_build_object('label', ${label}::text || i, 'i', i)
      from generate_series(1, ${count}::int) i
      returning id, (data->>'i')::int as i
    )
    insert into webhook_deliveries (message_id, endpoint_id, next_attempt_at)
    select m.id, ${endpointId}::uuid, now() + (${firstDueS}::float8 + (m.i - 1) * ${stepS}::float8) * interval '1 second'
    from m`);
}

const labelOf = (claim: ClaimedDelivery) => (JSON.parse(claim.body) as { data: { label: string } }).data.label;

const claim = (options: Partial<ClaimOptions> & { limit: number; perEndpoint: number }) =>
  claimDueDeliveries(database.db, { leaseMs: LEASE_MS, skipEndpoints: [], ...options });

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/**
 * Rows of webhook_deliveries the claim's plan reads (returned or filtered out, every loop), from
 * EXPLAIN ANALYZE in a transaction rolled back (no lease is kept).
 */
async function deliveryRowsRead(options: ClaimOptions): Promise<number> {
  let plan: PlanNode | undefined;
  const rollback = new Error('rollback');
  await database.db
    .transaction(async (tx) => {
      const result = await tx.execute(sql`explain (analyze, format json) ${claimStatement(options)}`);
      const [row] = rowsOf<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(result);
      plan = row?.['QUERY PLAN'][0]?.Plan;
      throw rollback;
    })
    .catch((error: unknown) => {
      if (error !== rollback) throw error;
    });
  const read = (node: PlanNode): number =>
    (node['Relation Name'] === 'webhook_deliveries'
      ? ((node['Actual Rows'] ?? 0) +
          (node['Rows Removed by Filter'] ?? 0) +
          (node['Rows Removed by Index Recheck'] ?? 0)) *
        (node['Actual Loops'] ?? 1)
      : 0) + (node.Plans ?? []).reduce((sum, child) => sum + read(child), 0);
  expect(plan).toBeDefined();
  return read(plan as PlanNode);
}

describe('claimDueDeliveries beside a backlog of one endpoint', () => {
  it('takes at most perEndpoint rows of the backlog and the due rows of the others, oldest first', async () => {
    const a = await endpoint();
    const b = await endpoint();
    const c = await endpoint();
    // A: a dead endpoint's backlog, due for a day and older than everything else.
    await deliveries(a, 'a', BACKLOG, -86_400);
    // B: two due, then one due in an hour; C: three due, interleaved with B's.
    await deliveries(b, 'b', 2, -3600, 1800); // -60 min, -30 min
    await deliveries(b, 'b-later', 1, 3600);
    await deliveries(c, 'c', 3, -3000, 1300); // -50 min, -28:20, -6:40

    const claims = await claim({ limit: 10, perEndpoint: 3 });
    expect(claims.map(labelOf)).toEqual(['a1', 'a2', 'a3', 'b1', 'c1', 'b2', 'c2', 'c3']);
    expect(claims.filter((x) => x.endpointId === a)).toHaveLength(3);

    // The limit takes the oldest of those.
    await database.db.execute(sql`update webhook_deliveries set claimed_until = null`);
    expect((await claim({ limit: 4, perEndpoint: 3 })).map(labelOf)).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it('passes over a row under a live lease and takes the next due row of the same endpoint', async () => {
    const a = await endpoint();
    const b = await endpoint();
    await deliveries(a, 'a', BACKLOG, -86_400);
    await deliveries(b, 'b', 1, -60);
    // a1 and a2 are in flight in another process; a3's lease ran out (that process died).
    await database.db.execute(sql`update webhook_deliveries
      set claimed_until = case when m.data->>'label' = 'a3' then now() - interval '1 second' else now() + interval '1 minute' end
      from webhook_messages m where m.id = webhook_deliveries.message_id and m.data->>'label' in ('a1', 'a2', 'a3')`);

    const first = await claim({ limit: 10, perEndpoint: 2 });
    expect(first.map(labelOf)).toEqual(['a3', 'a4', 'b1']);
    // Leased now: the next claim takes the rows after them, never the same ones.
    const second = await claim({ limit: 10, perEndpoint: 2 });
    expect(second.map(labelOf)).toEqual(['a5', 'a6']);
  });

  it('reads a few rows per endpoint with pending deliveries, not the backlog', async () => {
    const a = await endpoint();
    const others = [await endpoint(), await endpoint(), await endpoint()];
    await deliveries(a, 'a', BACKLOG, -86_400);
    for (const other of others) await deliveries(other, 'o', 5, -600);
    // Rows of A in flight elsewhere are passed over, and read.
    await database.db.execute(sql`update webhook_deliveries set claimed_until = now() + interval '1 minute'
      where id in (select id from webhook_deliveries where endpoint_id = ${a}::uuid order by next_attempt_at limit 4)`);
    const options = { limit: 8, perEndpoint: 4, leaseMs: LEASE_MS, skipEndpoints: [] };
    // 4 endpoints: the walk over their ids, 4 candidates each plus A's 4 leased rows, the
    // candidates again by primary key, the 8 leased: about 60. Numbering every due row read 5,000+.
    // As the rows were just written (PGlite never has statistics), then after ANALYZE.
    for (const analyzed of [false, true]) {
      if (analyzed) await database.db.execute(sql`analyze webhook_deliveries`);
      const read = await deliveryRowsRead(options);
      expect(read, analyzed ? 'after ANALYZE' : 'before ANALYZE').toBeGreaterThan(0);
      expect(read, analyzed ? 'after ANALYZE' : 'before ANALYZE').toBeLessThan(150);
    }
  });
});

describe('claimDueDeliveries rules', () => {
  it('skips endpoints at their limit, deleted endpoints and rows not due; one row of a probing endpoint', async () => {
    const probing = await endpoint();
    const skipped = await endpoint();
    const deleted = await endpoint({ deleted: true });
    const later = await endpoint();
    const normal = await endpoint();
    await deliveries(probing, 'p', 3, -600);
    await deliveries(skipped, 's', 2, -500);
    await deliveries(deleted, 'd', 2, -900);
    await deliveries(later, 'l', 2, 60);
    await deliveries(normal, 'n', 3, -300);

    const first = await claim({ limit: 10, perEndpoint: 2, skipEndpoints: [skipped], probing: [probing] });
    expect(first.map(labelOf)).toEqual(['p1', 'n1', 'n2']);
    const second = await claim({ limit: 10, perEndpoint: 2 });
    expect(second.map(labelOf)).toEqual(['p2', 'p3', 's1', 's2', 'n3']);
    expect(await claim({ limit: 10, perEndpoint: 2 })).toEqual([]);
  });

  it('signs with the previous secret only while it is valid', async () => {
    const valid = await endpoint({ previousSecretExpiresInS: 3600 });
    const expired = await endpoint({ previousSecretExpiresInS: -1 });
    await deliveries(valid, 'v', 1, -20);
    await deliveries(expired, 'x', 1, -10);
    const claims = await claim({ limit: 10, perEndpoint: 2 });
    expect(claims.map((x) => [labelOf(x), x.secrets])).toEqual([
      ['v1', ['whsec_current', 'whsec_previous']],
      ['x1', ['whsec_current']],
    ]);
  });

  it('concurrent claims take different rows', async () => {
    const endpoints = [await endpoint(), await endpoint(), await endpoint()];
    for (const id of endpoints) await deliveries(id, 'r', 20, -600);
    const claims = (await Promise.all(Array.from({ length: 6 }, () => claim({ limit: 5, perEndpoint: 4 })))).flat();
    const ids = claims.map((x) => x.deliveryId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(12);
  });
});
