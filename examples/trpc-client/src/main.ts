// Partner Tags through tRPC: the same procedures as REST, typed end to end by `AppRouter` from the
// published types-only package `@partner/trpc`, as a partner installs it (a type-only import:
// nothing of the server runs in this process). `@partner/server/testing/dns-server` below is the
// demo's loopback DNS server only, for the verification step without a real domain.
//
//   PARTNER_API_KEY=mp_test_... pnpm example:trpc   # the test key the first `pnpm start` printed
//
// Environment: see ../README.md (same as the other examples).
import { readFileSync } from 'node:fs';
import { startTestDnsServer } from '@partner/server/testing/dns-server';
import type { AppRouter } from '@partner/trpc';
import { createTRPCClient, httpBatchLink, retryLink, TRPCClientError } from '@trpc/client';
import type { inferRouterOutputs } from '@trpc/server';

type Outputs = inferRouterOutputs<AppRouter>;
type TrackingEvent = Outputs['events']['list']['events'][number];

function config() {
  let apiKey = process.env.PARTNER_API_KEY || undefined;
  if (!apiKey && process.env.PARTNER_ONBOARDING_FILE) {
    apiKey = (JSON.parse(readFileSync(process.env.PARTNER_ONBOARDING_FILE, 'utf8')) as { apiKey?: string }).apiKey;
  }
  if (!apiKey) {
    throw new Error(
      'No API key: set PARTNER_API_KEY (the test key mp_test_... the first `pnpm start` printed), or ' +
        'PARTNER_ONBOARDING_FILE to the output of `pnpm partner onboard --json`.',
    );
  }
  return {
    apiKey,
    // A test key works on the partner's test mode: its own data, and DNS simulated.
    testMode: apiKey.startsWith('mp_test_'),
    baseUrl: (process.env.PARTNER_BASE_URL || 'http://localhost:3000').replace(/\/+$/, ''),
    partnerDomain: process.env.PARTNER_DOMAIN || 'demo-partner.example',
    customDomain: process.env.CUSTOM_DOMAIN || undefined,
    dnsPort: Number(process.env.EXAMPLE_DNS_PORT || 15353),
  };
}

/** The application error code the server puts in every tRPC error (`MERCHANT_NOT_FOUND`, ...). */
function appCode(error: unknown): string | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const data = error.data as { code?: string } | undefined;
  return data?.code;
}

function httpStatus(error: unknown): number | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  return (error.data as { httpStatus?: number } | undefined)?.httpStatus;
}

const step = (title: string) => console.log(`\n== ${title}`);

async function main(): Promise<void> {
  const cfg = config();
  const client = createTRPCClient<AppRouter>({
    links: [
      // Retry queries (reads) on transient failures: connection errors, 429 and 5xx. Mutations are
      // not retried here: the server's idempotency keys are a REST feature.
      retryLink({
        retry: ({ op, error, attempts }) => {
          if (op.type !== 'query' || attempts > 3) return false;
          const status = httpStatus(error);
          return status === undefined || status === 429 || status >= 500;
        },
        retryDelayMs: (attempt) => Math.min(250 * 2 ** attempt, 4000),
      }),
      httpBatchLink({
        url: `${cfg.baseUrl}/trpc`,
        headers: () => ({ authorization: `Bearer ${cfg.apiKey}` }),
      }),
    ],
  });
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

  step('1. Create a merchant');
  const { merchantId } = await client.merchant.create.mutate({ name: `tRPC Store ${runId}` });
  console.log(`merchantId ${merchantId}`);

  step("2. Generate a preverified tag (a domain under the partner's own domain: live at once)");
  const preverified = await client.tag.generate.mutate({ merchantId, domain: `shop.${cfg.partnerDomain}` });
  console.log(`tagId ${preverified.tagId}, status ${preverified.status}`);
  if (preverified.status !== 'active') throw new Error(`expected an active preverified tag, got ${preverified.status}`);

  step('3. Generate a custom-domain tag (answers the CNAME record to publish)');
  const customDomain = cfg.customDomain ?? `trpc-store-${runId}.com`;
  const custom = await client.tag.generate.mutate({ merchantId, domain: customDomain });
  const recordName = `${custom.record.name}.${customDomain}`;
  console.log(`tagId ${custom.tagId}, status ${custom.status}`);
  console.log(`publish:  ${recordName}  CNAME  ${custom.record.value}`);

  step('4. Verify the custom domain');
  const verify = () => client.tag.verify.mutate({ tagId: custom.tagId, subdomain: customDomain });
  if (cfg.testMode) {
    console.log('Test mode (mp_test_ key): DNS is simulated, so the record counts as published.');
    if (!(await verify()).verified) throw new Error('not verified');
  } else if (cfg.customDomain) {
    for (let attempt = 1; ; attempt++) {
      try {
        await verify();
        break;
      } catch (error) {
        // 422: the record is not visible yet; 503: DNS did not answer. Both: wait and try again.
        const status = httpStatus(error);
        if ((status !== 422 && status !== 503) || attempt >= 30) throw error;
        console.log(`attempt ${attempt}: ${appCode(error)}: ${(error as Error).message}; retrying in 20 s`);
        await new Promise((resolve) => setTimeout(resolve, 20_000));
      }
    }
  } else {
    console.log(`No CUSTOM_DOMAIN given: using a LOOPBACK DNS server on 127.0.0.1:${cfg.dnsPort} instead of real DNS`);
    console.log(`(the API server must run with DNS_SERVERS=127.0.0.1:${cfg.dnsPort}).`);
    const dns = await startTestDnsServer({ port: cfg.dnsPort });
    try {
      try {
        await verify();
        throw new Error('verification succeeded before the record was published');
      } catch (error) {
        if (httpStatus(error) !== 422) throw error;
        console.log(`before publishing: HTTP 422 ${appCode(error)}: ${(error as Error).message}`);
      }
      dns.setCname(recordName, custom.record.value);
      console.log(`published ${recordName} CNAME ${custom.record.value} on the loopback DNS server`);
      const result = await verify().catch((error: unknown) => {
        if (httpStatus(error) === 422) {
          console.error(`Hint: is the API server running with DNS_SERVERS=127.0.0.1:${cfg.dnsPort}?`);
        }
        throw error;
      });
      if (!result.verified) throw new Error('not verified');
    } finally {
      await dns.close();
    }
  }
  console.log('verified: true');

  step('5. Send events through the collector (collect.ingest, public)');
  const now = new Date().toISOString();
  const today = now.slice(0, 10);
  const batch = {
    tagId: preverified.tagId,
    events: [
      { id: `${runId}-1`, event_name: 'PageView', event_time: now, muid: 'user-1', data: { path: '/' } },
      { id: `${runId}-2`, event_name: 'AddToCart', event_time: now, muid: 'user-1', data: { sku: 'A-1' } },
      { id: `${runId}-3`, event_name: 'Purchase', event_time: now, muid: 'user-1', data: { value: 42.5 } },
      { id: `${runId}-4`, event_name: 'PageView', event_time: now, muid: 'user-2', data: { path: '/shoes' } },
      { id: `${runId}-5`, event_name: 'Purchase', event_time: now, muid: 'user-2', data: { value: 19 } },
    ],
  };
  console.log(`accepted ${(await client.collect.ingest.mutate(batch)).accepted}`);
  console.log(
    `the same batch again (a retry): accepted ${(await client.collect.ingest.mutate(batch)).accepted}, stored once`,
  );
  const customBatch = {
    tagId: custom.tagId,
    events: [{ id: `${runId}-c1`, event_name: 'PageView', event_time: now, data: { path: '/' } }],
  };
  console.log(
    `the verified custom tag takes events too: accepted ${(await client.collect.ingest.mutate(customBatch)).accepted}`,
  );

  step('6. Read PageView and Purchase events of today, newest first, 2 per page');
  const rows: TrackingEvent[] = [];
  let page = 1;
  for (;;) {
    const result = await client.events.list.query({
      merchantId,
      events: 'PageView,Purchase',
      startDate: today,
      endDate: today,
      sortBy: 'event_time',
      sortOrder: 'desc',
      page,
      limit: 2,
    });
    rows.push(...result.events);
    if (!result.pagination.hasNextPage) break;
    page += 1;
  }
  console.table(
    rows.map((event) => ({
      event_time: event.event_time,
      event_name: event.event_name,
      muid: event.muid.slice(0, 12),
      data: event.raw_data,
    })),
  );
  console.log(`${rows.length} events on ${page} pages`);
  if (rows.length !== 5) throw new Error(`expected 5 events (3 PageView + 2 Purchase), got ${rows.length}`);

  step('7. Errors carry the application code in error.data.code: branch on it');
  try {
    await client.events.list.query({ merchantId: '00000000-0000-4000-8000-000000000000' });
    throw new Error('expected MERCHANT_NOT_FOUND');
  } catch (error) {
    if (appCode(error) !== 'MERCHANT_NOT_FOUND') throw error;
    console.log(`unknown merchant -> ${httpStatus(error)} ${appCode(error)}: ${(error as Error).message}`);
  }
  try {
    await client.events.list.query({ merchantId, limit: 500 });
    throw new Error('expected VALIDATION_ERROR');
  } catch (error) {
    if (appCode(error) !== 'VALIDATION_ERROR') throw error;
    console.log(`limit=500 -> ${httpStatus(error)} ${appCode(error)}: ${(error as Error).message}`);
  }

  console.log('\nDone: the tRPC flow works end to end.');
}

main().catch((error: unknown) => {
  const code = appCode(error);
  console.error(`\nFailed${code ? ` (${code})` : ''}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
