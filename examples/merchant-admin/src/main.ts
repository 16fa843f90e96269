// A partner's merchant admin: this backend creates merchant sessions with the SDK and serves a
// page, on its own origin, that embeds <partner-tags-dashboard> from @partner/elements. The page
// fetches its session from POST /api/session; the element renews it there before it expires.
//
//   PARTNER_API_KEY=mp_test_... pnpm example:admin   # the test key the first `pnpm start` printed
//   MERCHANT_ID=<uuid> pnpm example:admin       # an existing merchant instead of demo data
//
// Without MERCHANT_ID (or with --seed) it first creates a demo merchant with a preverified tag and
// sends a few hundred events through the collector. With --check it then loads its own page and
// assets, takes a session as the page would, reads the summary with it from the page's origin,
// compares it with the partner key's answer and exits (CI's smoke run).
// Environment: see ../README.md; also ADMIN_PORT (3200), ADMIN_HOST (127.0.0.1),
// ADMIN_TIMEZONE (UTC), ADMIN_SESSION_SECONDS (900).
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { PartnerClient } from '@partner/sdk';
import { seedMerchant } from './seed.js';
import { startAdminServer } from './server.js';

function apiKeyFromEnvOrOnboarding(): string | undefined {
  if (process.env.PARTNER_API_KEY) return process.env.PARTNER_API_KEY;
  const file = process.env.PARTNER_ONBOARDING_FILE;
  return file ? (JSON.parse(readFileSync(file, 'utf8')) as { apiKey: string }).apiKey : undefined;
}

const today = () => new Date().toISOString().slice(0, 10);
/** The demo events are at most 50 days old; a range is at most 400 days. */
const since = () => new Date(Date.now() - 59 * 86_400_000).toISOString().slice(0, 10);

/** Waits until the statistics count every event sent (they are kept as events are stored). */
async function waitCounted(client: PartnerClient, merchantId: string, sent: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { totals } = await client.stats.summary({ merchantId, startDate: since(), endDate: today() });
    if (totals.events === sent) return;
    if (Date.now() > deadline) throw new Error(`the statistics count ${totals.events} of the ${sent} events sent`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The smoke check: page, assets, a session as the page takes it, and what it reads from the page's origin. */
async function check(client: PartnerClient, url: string, merchantId: string): Promise<void> {
  const html = await (await fetch(url)).text();
  if (!html.includes('<partner-tags-dashboard')) throw new Error('GET / has no <partner-tags-dashboard>');
  for (const asset of ['admin.js', 'admin.css', 'elements/partner-tags-dashboard.js']) {
    const res = await fetch(new URL(asset, url));
    if (res.status !== 200 || (await res.arrayBuffer()).byteLength === 0)
      throw new Error(`GET /${asset}: ${res.status}`);
  }
  const origin = new URL(url).origin;
  const refused = await fetch(new URL('api/session', url), {
    method: 'POST',
    headers: { origin: 'https://evil.example' },
  });
  if (refused.status !== 403) throw new Error(`POST /api/session from another origin answered ${refused.status}`);
  const taken = await fetch(new URL('api/session', url), { method: 'POST', headers: { origin } });
  const session = (await taken.json()) as { token: string; merchantId: string };
  if (taken.status !== 201 || !session.token.startsWith('ms_')) throw new Error(`POST /api/session: ${taken.status}`);
  const query = `merchantId=${merchantId}&startDate=${since()}&endDate=${today()}&timezone=UTC`;
  const read = await fetch(`${client.baseURL}/v1/partners/stats/summary?${query}`, {
    headers: { authorization: `Bearer ${session.token}`, origin },
  });
  if (read.headers.get('access-control-allow-origin') !== origin)
    throw new Error('the API allows no CORS for the page');
  const withSession = await read.json();
  const withKey = await client.stats.summary({ merchantId, startDate: since(), endDate: today(), timezone: 'UTC' });
  if (!isDeepStrictEqual(withSession, withKey)) throw new Error('the session reads other numbers than the key');
  console.log(
    `check: the page and its assets answer; a session for ${origin} reads ${withKey.totals.events} events, ` +
      `${withKey.totals.visitors} visitors, the same as the API key`,
  );
}

async function main(): Promise<void> {
  const args = new Set(process.argv.slice(2));
  const baseURL = process.env.PARTNER_BASE_URL || 'http://localhost:3000';
  const client = new PartnerClient({ apiKey: apiKeyFromEnvOrOnboarding(), baseURL, maxRetries: 3, timeout: 15_000 });
  let merchantId = process.env.MERCHANT_ID || '';
  if (!merchantId || args.has('--seed')) {
    const seeded = await seedMerchant(client, process.env.PARTNER_DOMAIN || 'demo-partner.example');
    merchantId = seeded.merchantId;
    console.log(`seeded merchant ${merchantId} (${seeded.name}): ${seeded.sent} events sent to /v1/collect`);
    await waitCounted(client, merchantId, seeded.sent);
  }
  const merchant = await client.merchants.retrieve(merchantId);
  const server = await startAdminServer({
    client,
    merchantId,
    merchantName: merchant.name,
    apiBase: baseURL,
    timezone: process.env.ADMIN_TIMEZONE || 'UTC',
    sessionSeconds: Number(process.env.ADMIN_SESSION_SECONDS || 900),
    host: process.env.ADMIN_HOST || '127.0.0.1',
    port: args.has('--check') ? 0 : Number(process.env.ADMIN_PORT || 3200),
  });
  console.log(`merchant admin of merchant ${merchantId}: ${server.url}`);
  if (args.has('--check')) {
    try {
      await check(client, server.url, merchantId);
    } finally {
      await server.close();
    }
    return;
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void server.close().then(() => process.exit(0)));
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
