import { randomBytes } from 'node:crypto';
import { type RunningApp, startApp } from '../app.js';
import type { Context } from '../context.js';
import { revokeApiKeys, rotateApiKey } from '../features/partners/key-admin.js';
import { type OnboardedPartner, onboardPartner } from '../features/partners/onboard-partner.js';
import { createLogger } from '../kernel/logger.js';
import type { TestKnobs } from '../kernel/test-knobs.js';
import { appRouter } from '../routes/_app.js';
import { createCallerFactory } from '../routes/procedures.js';

const createCaller = createCallerFactory(appRouter);

import { startTestDnsServer, type TestDnsServer } from './dns-server.js';
import { recordResponses } from './record-responses.js';
import { openTestAppDatabase, testAppEnv } from './test-app-env.js';

export { type DnsBehaviour, startTestDnsServer, type TestDnsServer } from './dns-server.js';
export { freePort } from './net.mjs';
export { openTestPglite, pgliteTemplate } from './pglite-template.js';
export { quantile } from './quantile.js';
export { type RecordedResponse, recordResponses } from './record-responses.js';
export { SERVER_DIR, type ServerProcess, type SpawnServerOptions, spawnServer } from './server-process.js';

export { TEST_TARGET_HOST } from './test-app-env.js';

export interface TestPartner {
  partnerId: string;
  apiKey: string;
  /** The partner's `mp_test_` key (its test-mode twin, docs/decisions/test-mode.md). */
  testApiKey: string;
  domain: string;
  record: OnboardedPartner['record'];
}

export interface TestServer {
  /** Base URL of the real HTTP server on loopback, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** A partner onboarded for this server. */
  partner: TestPartner;
  createPartner(name?: string, domain?: string): Promise<TestPartner>;
  /** The loopback DNS server the app verifies against. */
  dns: TestDnsServer & { targetHost: string };
  app: RunningApp;
  /** A tRPC caller with the given API key as its Authorization header (no key: unauthenticated). */
  caller(apiKey?: string): ReturnType<typeof createCaller>;
  /** Issues the partner a new key; the app forgets its cached keys at once, not on the notification. */
  rotateKey(partnerId: string, overlapMs?: number): Promise<{ apiKey: string; oldKeysExpireAt: string }>;
  /** Revokes every usable key of the partner (how many); the app forgets its cached keys at once. */
  revokeKeys(partnerId: string): Promise<number>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Real PostgreSQL; default: TEST_DATABASE_URL when set, else an in-memory PGlite. */
  databaseUrl?: string;
  env?: Record<string, string>;
  /** Timings only tests shrink (kernel/test-knobs.ts): not settings, so not in `env`. */
  knobs?: Partial<TestKnobs>;
  /** Where the app's log lines go (default stdout); with `env.LOG_LEVEL` a test can read its logs. */
  logDestination?: { write(line: string): void };
}

/** A unique partner domain for tests, e.g. `p-1a2b3c4d.partner-tags-test.com`. */
export function uniquePartnerDomain(): string {
  return `p-${randomBytes(4).toString('hex')}.partner-tags-test.com`;
}

/** Starts the whole app for a test. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const databaseUrl = options.databaseUrl ?? process.env.TEST_DATABASE_URL ?? undefined;
  const dns = await startTestDnsServer();
  const env = testAppEnv(dns.address, databaseUrl, { PORT: '0', HOST: '127.0.0.1', ...options.env });
  const database = await openTestAppDatabase(env, databaseUrl);
  const app = await startApp(env, {
    database,
    logger: createLogger(env, options.logDestination),
    knobs: options.knobs,
  });
  // RECORD_RESPONSES=<dir>: every REST response lands there for the OpenAPI contract check.
  if (process.env.RECORD_RESPONSES) recordResponses(app.server, process.env.RECORD_RESPONSES);

  const createPartner = async (name = 'Test Partner', domain = uniquePartnerDomain()): Promise<TestPartner> => {
    const partner = await onboardPartner(database.db, { name, domain }, env.TAG_TARGET_HOST);
    return {
      partnerId: partner.partnerId,
      apiKey: partner.apiKey,
      testApiKey: partner.testApiKey,
      domain: partner.domain,
      record: partner.record,
    };
  };
  const partner = await createPartner();

  return {
    url: app.url,
    partner,
    createPartner,
    dns: Object.assign(dns, { targetHost: env.TAG_TARGET_HOST }),
    app,
    caller: (apiKey?: string) => {
      const ctx: Context = {
        ...app.deps,
        requestId: 'test',
        authorization: apiKey === undefined ? undefined : `Bearer ${apiKey}`,
        partner: null,
      };
      return createCaller(ctx);
    },
    rotateKey: async (partnerId, overlapMs) => {
      const rotated = await rotateApiKey(database.db, partnerId, overlapMs);
      app.deps.keys.cache.invalidate();
      return rotated;
    },
    revokeKeys: async (partnerId) => {
      const revoked = await revokeApiKeys(database.db, partnerId);
      app.deps.keys.cache.invalidate();
      return revoked;
    },
    close: async () => {
      await app.close(2000);
      await database.close();
      await dns.close();
    },
  };
}
export {
  type Caller,
  type CallFailure,
  failureOf,
  type InProcessApp,
  type InProcessPartner,
  startInProcessApp,
} from './in-process.js';
export {
  type ReceivedWebhook,
  type ReceiverAnswer,
  startWebhookReceiver,
  type TestWebhookReceiver,
} from './webhook-receiver.js';
