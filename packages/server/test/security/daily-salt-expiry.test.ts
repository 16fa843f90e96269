import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { createLogger } from '../../src/kernel/logger.js';
import { DailySalt } from '../../src/runtime/collector/daily-salt.js';
import { openTestAppDatabase, testAppEnv } from '../../src/testing/test-app-env.js';

/**
 * Issue 51, finding 11 (b): a day's cookieless salt (server_secrets `visitor-salt:<day>`) was
 * deleted only when a process first needed the next day's, so on a quiet day it outlived its day.
 * Now every process deletes an ended day's salt within seconds of the UTC midnight that ends it,
 * and at its start, with no collector traffic at all.
 */
const databaseUrl = process.env.TEST_DATABASE_URL || undefined;
const env = testAppEnv('127.0.0.1:9', databaseUrl, { PORT: '0', HOST: '127.0.0.1' });
let database: DatabaseHandle;
let app: RunningApp | undefined;

beforeAll(async () => {
  database = await openTestAppDatabase(env, databaseUrl);
}, 60_000);
afterAll(async () => {
  await app?.close();
  await database?.close();
});

const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function salts(): Promise<string[]> {
  const rows = rowsOf<{ name: string }>(
    await database.db.execute(sql`select name from server_secrets where name like 'visitor-salt:%' order by name`),
  );
  return rows.map((row) => row.name);
}

async function within(ms: number, done: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await done())) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}

describe('the salt of an ended day is deleted without collector traffic', () => {
  it('a process starting after a quiet day deletes the salt of the day before', async () => {
    const yesterday = `visitor-salt:${dayOf(Date.now() - DAY)}`;
    // Made yesterday by a process that collected a cookieless event; nothing has been collected since.
    await database.db.execute(sql`insert into server_secrets (name, value) values (${yesterday}, 'c2FsdA')`);
    expect(await salts()).toContain(yesterday);
    app = await startApp(env, { database, logger: createLogger(env) });
    const tookMs = await within(10_000, async () => !(await salts()).includes(yesterday));
    console.info(`daily-salt-expiry: yesterday's salt gone ${tookMs} ms after the start`);
  });

  it('the salt of day D is gone within seconds of the UTC midnight that ends D', async () => {
    // A clock 2.5 s before the end of a day D, running at the real pace.
    const endOfDay = Date.parse('2031-05-05T23:59:57.500Z') + 2_500;
    const offset = endOfDay - 2_500 - Date.now();
    const salt = new DailySalt(database.db, { clock: () => Date.now() + offset });
    const name = 'visitor-salt:2031-05-05';
    try {
      await salt.today();
      salt.start();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await salts()).toContain(name); // kept while D lasts
      await within(20_000, async () => !(await salts()).includes(name));
      const afterEnd = Date.now() + offset - endOfDay;
      console.info(`daily-salt-expiry: day D's salt gone ${afterEnd} ms after D ended (clock time)`);
      expect(afterEnd).toBeGreaterThanOrEqual(0);
      expect(afterEnd).toBeLessThan(60_000);
    } finally {
      await salt.stop();
    }
  }, 30_000);
});
