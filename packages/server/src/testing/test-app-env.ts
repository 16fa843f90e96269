import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type DatabaseHandle, openDatabase } from '../db/client.js';
import { type Env, parseEnv } from '../kernel/env.js';
import { openTestPglite } from './pglite-template.js';

export const TEST_TARGET_HOST = 'tags.partner-tags.example';

let processDataDir: string | undefined;

/** This process's DATA_DIR for test apps. */
export function testDataDir(): string {
  if (!processDataDir) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'partner-tags-test-'));
    processDataDir = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return processDataDir;
}

/** The env every test app starts from. */
export function testAppEnv(
  dnsAddress: string,
  databaseUrl: string | undefined,
  extra: Record<string, string> = {},
): Env {
  return parseEnv({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    TAG_TARGET_HOST: TEST_TARGET_HOST,
    DNS_SERVERS: dnsAddress,
    DNS_TIMEOUT_MS: '1000',
    RATE_LIMIT_PER_MINUTE: '1000000',
    COLLECT_RATE_LIMIT_PER_MINUTE: '1000000',
    AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000',
    AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE: '1000000',
    WEBHOOK_TEST_CALLS_PER_PARTNER: '1000000',
    COLLECT_TAG_EVENTS_PER_MINUTE: '0',
    COLLECT_TAG_BYTES_PER_MINUTE: '0',
    COLLECT_TAG_EVENTS_PER_DAY: '0',
    COLLECT_TAG_BYTES_PER_DAY: '0',
    COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: '0',
    TAG_MONITOR: 'off',
    STATS_NOTICES: 'off',
    WEBHOOK_DELIVERY: 'off',
    EVENT_RETENTION: 'off',
    DATA_DIR: testDataDir(),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...extra,
  });
}

/** The test's database: the PostgreSQL of `databaseUrl`, else a copy of the migrated PGlite template. */
export function openTestAppDatabase(env: Env, databaseUrl: string | undefined): Promise<DatabaseHandle> {
  return databaseUrl
    ? openDatabase({
        kind: 'postgres',
        url: databaseUrl,
        maxConnections: 10,
        statementTimeoutMs: env.DB_STATEMENT_TIMEOUT,
        migrationTimeoutMs: env.DB_LONG_STATEMENT_TIMEOUT,
      })
    : openTestPglite();
}
