import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestPartner, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { createMerchant } from '../helpers/fixtures.js';

/**
 * Issue 51, finding 4: postgres.js 3.4.9 reset its row counter only on CommandComplete, so after a
 * query that failed halfway through its result the next query on the same pooled connection came
 * back with the failed query's row count in front of its own rows (`length=3000`, `[0]=undefined`):
 * through the server, another partner got false 404 MERCHANT_NOT_FOUND. Fixed in our patch of the
 * driver (patches/postgres@3.4.9.patch, patches/README.md). PostgreSQL only: PGlite has no wire.
 */
const DATABASE_URL = process.env.TEST_DATABASE_URL;
if (!DATABASE_URL) console.warn('failed-query-pooled-connection skipped: TEST_DATABASE_URL is not set');

/** Sends 1,499 rows, then fails on the 1,500th (division by zero). */
const FAILS_MID_RESULT = 'select 1 / (g - 1500) as v from generate_series(1, 3000) g';

describe.skipIf(!DATABASE_URL)('a query failing mid-result leaves its pooled connection answering right', () => {
  it('the driver, a pool of one: the next query returns exactly its own rows (in turn and pipelined)', async () => {
    const db = postgres(DATABASE_URL as string, { max: 1, onnotice: () => {} });
    try {
      for (const pipelined of [false, true]) {
        const failed = db.unsafe(FAILS_MID_RESULT).then(
          () => 'resolved',
          (error: Error) => error.message,
        );
        if (!pipelined) expect(await failed).toBe('division by zero');
        const next = await db`select g from generate_series(1, 5) g`;
        expect(await failed).toBe('division by zero');
        expect([next.length, next.map((row) => row.g)]).toEqual([5, [1, 2, 3, 4, 5]]);
      }
    } finally {
      await db.end();
    }
  });

  describe('through the server: one pooled connection shared by two partners', () => {
    let server: TestServer;
    let other: TestPartner;
    let merchantIds: string[];

    beforeAll(async () => {
      server = await startTestServer({ env: { DB_POOL_MAX: '1' } });
      other = await server.createPartner('Other partner');
      merchantIds = [];
      for (let i = 0; i < 3; i++) merchantIds.push(await createMerchant(server, other.apiKey, `Shop ${i}`));
    }, 60_000);
    afterAll(async () => {
      await server?.close();
    });

    it("while one partner's statistics-like reads fail mid-result, another's GET merchant never answers 404", async () => {
      const N = 60;
      const statuses: number[] = [];
      let failures = 0;
      for (let i = 0; i < N; i++) {
        // The failing read on the app's own pool, and the other partner's call right behind it.
        const failing = server.app.deps.db.execute(sql.raw(FAILS_MID_RESULT)).then(
          () => undefined,
          () => void failures++,
        );
        const res = await api(server, other.apiKey).get(`/v1/partners/merchant/${merchantIds[i % 3]}`);
        await failing;
        statuses.push(res.status);
      }
      const notFound = statuses.filter((status) => status === 404).length;
      console.info(`failed-query-pooled-connection: ${notFound} of ${N} GET merchant answered 404`);
      expect(failures).toBe(N);
      expect(statuses).toEqual(Array(N).fill(200));
    });
  });
});
