// The fast tier's harness (test/fast/): the real app, its real deps and the real appRouter, called in-process through
// createCaller on a copy of the migrated PGlite template (or TEST_DATABASE_URL's database).
import type { ErrorBody } from '@partner/shared-schemas';
import { TRPCError } from '@trpc/server';
import { composeApp } from '../compose.js';
import { type AppDeps, requestContext } from '../context.js';
import type { DatabaseHandle } from '../db/client.js';
import { onboardPartner } from '../features/partners/onboard-partner.js';
import type { Env } from '../kernel/env.js';
import { errorResponse } from '../kernel/errors.js';
import { createLogger } from '../kernel/logger.js';
import type { TestKnobs } from '../kernel/test-knobs.js';
import { appRouter } from '../routes/_app.js';
import { appErrorOf, createCallerFactory } from '../routes/procedures.js';
import { startTestDnsServer, type TestDnsServer } from './dns-server.js';
import { openTestAppDatabase, testAppEnv } from './test-app-env.js';

const createCaller = createCallerFactory(appRouter);
export type Caller = ReturnType<typeof createCaller>;

export interface InProcessPartner {
  partnerId: string;
  apiKey: string;
  /** The partner's `mp_test_` key (its test-mode twin). */
  testApiKey: string;
  domain: string;
}

export interface InProcessApp {
  deps: AppDeps;
  env: Env;
  database: DatabaseHandle;
  /** The loopback DNS server the app resolves against (tag verification, webhook hosts). */
  dns: TestDnsServer & { targetHost: string };
  /** Onboards a new partner (a unique domain unless given): one per test keeps tests apart. */
  createPartner(name?: string, domain?: string): Promise<InProcessPartner>;
  /** A caller with `Bearer <apiKey>` as its Authorization (no key: unauthenticated). */
  caller(apiKey?: string): Caller;
  close(): Promise<void>;
}

let partners = 0;

/** A partner domain no other test of the run uses. */
function partnerDomain(): string {
  return `p${process.pid}-${++partners}-${Date.now().toString(36)}.partner-tags-test.com`;
}

/** Composes and starts the app in this process for one test file: every part but a listener. */
export async function startInProcessApp(
  options: { env?: Record<string, string>; knobs?: Partial<TestKnobs> } = {},
): Promise<InProcessApp> {
  const databaseUrl = process.env.TEST_DATABASE_URL || undefined;
  const dns = await startTestDnsServer();
  const env = testAppEnv(dns.address, databaseUrl, options.env);
  const database = await openTestAppDatabase(env, databaseUrl);
  const { deps, lifecycle } = await composeApp(env, { database, logger: createLogger(env), knobs: options.knobs });
  await lifecycle.start();
  let calls = 0;
  return {
    deps,
    env: deps.env,
    database,
    dns: Object.assign(dns, { targetHost: env.TAG_TARGET_HOST }),
    createPartner: async (name = 'Fast Partner', domain = partnerDomain()) => {
      const partner = await onboardPartner(database.db, { name, domain }, env.TAG_TARGET_HOST);
      return {
        partnerId: partner.partnerId,
        apiKey: partner.apiKey,
        testApiKey: partner.testApiKey,
        domain: partner.domain,
      };
    },
    caller: (apiKey?: string) =>
      createCaller(
        requestContext(deps, {
          requestId: `fast-${++calls}`,
          authorization: apiKey === undefined ? undefined : `Bearer ${apiKey}`,
          partner: null,
        }),
      ),
    close: async () => {
      await lifecycle.stop(1000);
      await database.close();
      await dns.close();
    },
  };
}

/** What a failed call answers on every transport: its HTTP status and `{ message, code, details? }`. */
export interface CallFailure extends ErrorBody {
  status: number;
  /** tRPC's code (`NOT_FOUND`, `BAD_REQUEST`...). */
  trpcCode: string;
}

/** The failure of a call that must fail (a success fails the test). */
export async function failureOf(call: Promise<unknown>): Promise<CallFailure> {
  const error = await call.then(
    (value) => {
      throw new Error(`expected the call to fail, it answered ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  if (!(error instanceof TRPCError)) throw error;
  const { status, body } = errorResponse(appErrorOf(error));
  return { ...body, status, trpcCode: error.code };
}
