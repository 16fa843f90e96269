// The contract of `@partner/server/testing` that the SDK's integration tests use, declared here so
// the SDK does not type-check the server's sources.

interface PartnerInfo {
  partnerId: string;
  apiKey: string;
  /** The partner's test-mode key (`mp_test_...`). */
  testApiKey: string;
  domain: string;
}

export interface TestServer {
  url: string;
  partner: PartnerInfo;
  createPartner(name?: string, domain?: string): Promise<PartnerInfo>;
  dns: { setCname(name: string, target: string): void; targetHost: string };
  app: { deps: { streams: { size: number } } };
  close(): Promise<void>;
}

/** Timings only tests shrink: not settings of the server (its src/kernel/test-knobs.ts). */
interface TestKnobs {
  webhookPollMs?: number;
}

interface TestingModule {
  startTestServer(opts?: {
    databaseUrl?: string;
    env?: Record<string, string>;
    knobs?: TestKnobs;
  }): Promise<TestServer>;
}

// Imported by a variable specifier so that `tsc` does not type-check the server's sources here.
const TESTING_MODULE = '@partner/server/testing';

/** Starts the real server (PGlite in memory, or TEST_DATABASE_URL) with its loopback DNS server. */
export async function startRealServer(env?: Record<string, string>, knobs?: TestKnobs): Promise<TestServer> {
  const testing = (await import(/* @vite-ignore */ TESTING_MODULE)) as TestingModule;
  return testing.startTestServer({ ...(env ? { env } : {}), ...(knobs ? { knobs } : {}) });
}
