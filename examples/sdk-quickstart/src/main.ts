// Partner Tags with the official SDK (@partner/sdk): merchant -> preverified and custom tags ->
// DNS verification -> events through the collector -> filtered events through the SDK's
// pagination iterator -> a small table -> the error handling a partner should write.
//
//   PARTNER_API_KEY=mp_test_... pnpm example:sdk   # the test key the first `pnpm start` printed
//   PARTNER_ONBOARDING_FILE=onboarding.json pnpm example:sdk   # the output of `pnpm partner onboard --json`
//
// Environment: see ../README.md (same as the other examples).
import { readFileSync } from 'node:fs';
import net from 'node:net';
import {
  APIConnectionError,
  APIError,
  BadRequestError,
  NotFoundError,
  PartnerClient,
  PartnerError,
  RateLimitError,
  type TrackingEvent,
  UnprocessableEntityError,
} from '@partner/sdk';
import { startTestDnsServer } from '@partner/server/testing/dns-server';

interface Onboarding {
  partnerId: string;
  apiKey: string;
  record: { type: string; name: string; value: string; ttl: number };
}

/** The API key: PARTNER_API_KEY, or the `apiKey` of the onboarding output in PARTNER_ONBOARDING_FILE. */
function apiKeyFromEnvOrOnboarding(): string {
  if (process.env.PARTNER_API_KEY) return process.env.PARTNER_API_KEY;
  const file = process.env.PARTNER_ONBOARDING_FILE;
  if (!file) {
    console.error('Set PARTNER_API_KEY: the test key (mp_test_...) the first `pnpm start` printed, or a key of yours.');
    process.exit(2);
  }
  const onboarding = JSON.parse(readFileSync(file, 'utf8')) as Onboarding;
  console.log(`API key of partner ${onboarding.partnerId} read from the onboarding output ${file}`);
  return onboarding.apiKey;
}

const step = (title: string) => console.log(`\n== ${title}`);

/**
 * The error handling a partner should write around any SDK call: branch on the error class (the
 * HTTP status) and on `code`, retry only what is transient (the SDK already retried it with
 * backoff), and log `requestId` for support. Returns what to do; rethrows what is not the SDK's.
 */
function whatToDo(error: unknown): string {
  if (error instanceof RateLimitError) return `rate limited: wait ${error.retryAfterMs ?? 1000} ms, then try again`;
  if (error instanceof NotFoundError) return `${error.code}: ${error.message} -> re-sync (it is gone or not yours)`;
  if (error instanceof UnprocessableEntityError) return `${error.code}: ${error.message} -> DNS not ready, try later`;
  if (error instanceof BadRequestError) return `${error.code}: ${error.message} -> fix the request, do not retry`;
  if (error instanceof APIError) {
    return `HTTP ${error.status} ${error.code}: ${error.message} (request ${error.requestId}) -> log, alert`;
  }
  if (error instanceof APIConnectionError)
    return `${error.name}: ${error.message} -> the API is unreachable, queue and retry later`;
  throw error;
}

/** A loopback TCP port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function table(rows: Record<string, string>[]): string {
  const first = rows[0];
  if (!first) return '(no rows)';
  const columns = Object.keys(first);
  const width = (c: string) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(width(columns[i] ?? ''))).join('  ');
  return [
    line(columns),
    line(columns.map((c) => '-'.repeat(width(c)))),
    ...rows.map((r) => line(columns.map((c) => r[c] ?? ''))),
  ].join('\n');
}

async function main(): Promise<void> {
  // apiKey / baseURL fall back to PARTNER_API_KEY / PARTNER_BASE_URL; the constructor throws a
  // PartnerError naming what is missing.
  const apiKey = apiKeyFromEnvOrOnboarding();
  // A test key works on the partner's test mode: its own data, and DNS simulated (nothing to publish).
  const testMode = apiKey.startsWith('mp_test_');
  const client = new PartnerClient({
    apiKey,
    baseURL: process.env.PARTNER_BASE_URL || 'http://localhost:3000',
    maxRetries: 3, // transient failures (connection errors, timeouts, 408/429/5xx) are retried with backoff
    timeout: 15_000, // per attempt
  });
  const partnerDomain = process.env.PARTNER_DOMAIN || 'demo-partner.example';
  const customDomainGiven = process.env.CUSTOM_DOMAIN || undefined;
  const dnsPort = Number(process.env.EXAMPLE_DNS_PORT || 15353);
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

  step('1. Create a merchant');
  // POSTs carry one Idempotency-Key per call (the SDK makes it), so their retries are safe too.
  const { merchantId } = await client.merchants.create({ name: `SDK Store ${runId}` });
  console.log(`merchantId ${merchantId}`);

  step("2. Generate a preverified tag (a domain under the partner's own domain: live at once)");
  const preverified = await client.tags.generate({ merchantId, domain: `shop.${partnerDomain}` });
  console.log(`tagId ${preverified.tagId}, status ${preverified.status} (${preverified.message})`);
  if (preverified.status !== 'active') throw new Error(`expected an active preverified tag, got ${preverified.status}`);

  step('3. Generate a custom-domain tag (answers the CNAME record to publish)');
  const customDomain = customDomainGiven ?? `sdk-store-${runId}.com`;
  const custom = await client.tags.generate({ merchantId, domain: customDomain });
  const recordName = `${custom.record.name}.${customDomain}`;
  console.log(`tagId ${custom.tagId}, status ${custom.status}`);
  console.log(`publish:  ${recordName}  ${custom.record.ttl}  IN  CNAME  ${custom.record.value}`);

  step('4. Verify the custom domain');
  const verify = () => client.tags.verify({ tagId: custom.tagId, subdomain: customDomain });
  if (testMode) {
    // Test mode answers as a zone holding the record would; a domain whose first label ends in a
    // reason (`shop-record-not-found.com`) fails with it instead (docs/decisions/test-mode.md).
    console.log('Test mode (mp_test_ key): DNS is simulated, so the record counts as published.');
    const { verified } = await verify();
    if (!verified) throw new Error('not verified');
  } else if (customDomainGiven) {
    // Real DNS: a 422 means "not visible yet" (propagation takes minutes to hours): wait and retry.
    for (let attempt = 1; ; attempt++) {
      try {
        await verify();
        break;
      } catch (error) {
        if (!(error instanceof UnprocessableEntityError) || attempt >= 30) throw error;
        console.log(`attempt ${attempt}: ${error.message}; retrying in 20 s`);
        await new Promise((resolve) => setTimeout(resolve, 20_000));
      }
    }
  } else {
    console.log(`No CUSTOM_DOMAIN given: using a LOOPBACK DNS server on 127.0.0.1:${dnsPort} instead of real DNS`);
    console.log(`(the API server must run with DNS_SERVERS=127.0.0.1:${dnsPort}).`);
    const dns = await startTestDnsServer({ port: dnsPort });
    try {
      try {
        await verify();
        throw new Error('verification succeeded before the record was published');
      } catch (error) {
        if (!(error instanceof UnprocessableEntityError)) throw error;
        console.log(`before publishing: UnprocessableEntityError ${error.status} ${error.code}: ${error.message}`);
      }
      dns.setCname(recordName, custom.record.value);
      console.log(`published ${recordName} CNAME ${custom.record.value} on the loopback DNS server`);
      const { verified } = await verify().catch((error: unknown) => {
        if (error instanceof UnprocessableEntityError) {
          console.error(`Hint: is the API server running with DNS_SERVERS=127.0.0.1:${dnsPort}?`);
        }
        throw error;
      });
      if (!verified) throw new Error('not verified');
    } finally {
      await dns.close();
    }
  }
  console.log('verified: true');

  step('5. Send events through the collector (POST /v1/collect: public, called by the tag, not the SDK)');
  const now = new Date().toISOString();
  const collect = async (tagId: string, events: object[]) => {
    const res = await fetch(`${client.baseURL}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tagId, events }),
    });
    if (res.status !== 202) throw new Error(`collect answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { accepted: number }).accepted;
  };
  const batch = [
    { id: `${runId}-1`, event_name: 'PageView', event_time: now, muid: 'user-1', data: { path: '/' } },
    { id: `${runId}-2`, event_name: 'AddToCart', event_time: now, muid: 'user-1', data: { sku: 'A-1' } },
    { id: `${runId}-3`, event_name: 'Purchase', event_time: now, muid: 'user-1', data: { value: 42.5 } },
    { id: `${runId}-4`, event_name: 'PageView', event_time: now, muid: 'user-2', data: { path: '/shoes' } },
    { id: `${runId}-5`, event_name: 'Purchase', event_time: now, muid: 'user-2', data: { value: 19 } },
  ];
  console.log(`accepted ${await collect(preverified.tagId, batch)}`);
  console.log(`the same batch again (a retry): accepted ${await collect(preverified.tagId, batch)}, stored once`);
  const customEvents = [{ id: `${runId}-c1`, event_name: 'PageView', event_time: now, data: { path: '/' } }];
  console.log(`the verified custom tag takes events too: accepted ${await collect(custom.tagId, customEvents)}`);

  step("6. Iterate today's PageView and Purchase events, newest first (the SDK fetches the pages)");
  const today = now.slice(0, 10);
  const events: TrackingEvent[] = [];
  // `for await` over list() walks every page (2 per request here, to show the paging).
  for await (const event of client.events.list({
    merchantId,
    events: ['PageView', 'Purchase'],
    startDate: today,
    endDate: today,
    sortBy: 'event_time',
    sortOrder: 'desc',
    limit: 2,
  })) {
    events.push(event);
  }
  console.log(
    table(
      events.map((e) => ({
        event_time: e.event_time,
        event_name: e.event_name,
        muid: e.muid.slice(0, 12),
        data: e.raw_data,
      })),
    ),
  );
  const firstPage = await client.events.list({ merchantId, events: 'PageView,Purchase', limit: 2 });
  console.log(
    `${events.length} events; first page: ${firstPage.data.length} of ${firstPage.pagination.totalItems}, ` +
      `${firstPage.pagination.totalPages} pages, hasNextPage ${firstPage.hasNextPage()}`,
  );
  if (events.length !== 5) throw new Error(`expected 5 events (3 PageView + 2 Purchase), got ${events.length}`);
  const merchants = await client.merchants.list({ limit: 100 }).toArray({ limit: 1000 });
  const mine = merchants.find((m) => m.merchantId === merchantId);
  console.log(`merchant ${mine?.name}: ${mine?.tags.map((t) => `${t.hostname} ${t.status}`).join(', ')}`);
  if (mine?.tags.length !== 2) throw new Error('expected the merchant with its two tags');

  step('7. Error handling a partner should write');
  // Typed errors: branch on the class (status) and on `code`; quote `requestId` to support.
  try {
    await client.events.list({ merchantId: '00000000-0000-4000-8000-000000000000' });
    throw new Error('expected NotFoundError');
  } catch (error) {
    if (!(error instanceof NotFoundError) || error.code !== 'MERCHANT_NOT_FOUND') throw error;
    console.log(`events of an unknown merchant: NotFoundError ${error.status}, ${whatToDo(error)}`);
  }
  try {
    // Well-formed dates that cannot be a range: the server names the mistake.
    await client.events.list({ merchantId, startDate: new Date('2026-02-01'), endDate: new Date('2026-01-01') });
    throw new Error('expected BadRequestError');
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error;
    console.log(`startDate after endDate: BadRequestError ${error.status}, ${whatToDo(error)}`);
  }
  // Transient failures are retried with backoff before an error reaches you: here a server that
  // does not answer (a closed port) -> APIConnectionError after 1 retry.
  const unreachable = client.withOptions({ baseURL: `http://127.0.0.1:${await closedPort()}`, maxRetries: 1 });
  const t0 = Date.now();
  try {
    await unreachable.merchants.list();
    throw new Error('expected APIConnectionError');
  } catch (error) {
    if (!(error instanceof APIConnectionError)) throw error;
    console.log(`after 1 retry (${Date.now() - t0} ms): ${whatToDo(error)}`);
  }
  try {
    await client.tags.generate({ merchantId: '00000000-0000-4000-8000-000000000000', domain: 'other-store.com' });
    throw new Error('expected NotFoundError');
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    console.log(`generate for an unknown merchant: ${whatToDo(error)}`);
  }

  console.log('\nDone: the SDK flow works end to end.');
}

main().catch((error: unknown) => {
  if (error instanceof APIError) {
    console.error(
      `\nFailed: ${error.name} ${error.status} ${error.code}: ${error.message} (request ${error.requestId})`,
    );
  } else if (error instanceof PartnerError) {
    console.error(`\nFailed: ${error.name}: ${error.message}`);
  } else {
    console.error(`\nFailed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
  process.exit(1);
});
