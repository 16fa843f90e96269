import { randomBytes } from 'node:crypto';
import type { TestServer } from '../../src/testing/index.js';
import { type ApiResponse, api, type Json } from './api.js';

/** A domain no other test uses: `<prefix>-<random>.com`. */
export function uniqueDomain(prefix = 'shop', tld = 'com'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}.${tld}`;
}

function expectStatus(res: ApiResponse, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text}`);
}

export async function createMerchant(server: TestServer, key = server.partner.apiKey, name = 'Merchant'): Promise<string> {
  const res = await api(server, key).post('/v1/partners/merchant', { name });
  expectStatus(res, 201, 'create merchant');
  return res.body.merchantId as string;
}

export interface GeneratedTag {
  merchantId: string;
  domain: string;
  tagId: string;
  record: { type: string; name: string; value: string; ttl: number };
  status: string;
  message: string;
}

export async function generateTag(
  server: TestServer,
  options: { key?: string; merchantId?: string; domain?: string } = {},
): Promise<GeneratedTag> {
  const key = options.key ?? server.partner.apiKey;
  const merchantId = options.merchantId ?? (await createMerchant(server, key));
  const domain = options.domain ?? uniqueDomain();
  const res = await api(server, key).post('/v1/partners/tag/generate', { merchantId, domain });
  expectStatus(res, 200, 'generate tag');
  return { merchantId, domain, ...(res.body as Omit<GeneratedTag, 'merchantId' | 'domain'>) };
}

/** A custom-domain tag whose CNAME is published in the loopback DNS and verified. */
export async function verifiedTag(server: TestServer, options: { key?: string } = {}): Promise<GeneratedTag> {
  const key = options.key ?? server.partner.apiKey;
  const tag = await generateTag(server, { key });
  server.dns.setCname(`${tag.record.name}.${tag.domain}`, tag.record.value);
  const res = await api(server, key).post('/v1/partners/tag/verify', { tagId: tag.tagId, subdomain: tag.domain });
  expectStatus(res, 200, 'verify tag');
  return tag;
}

/** A preverified tag (under the partner's domain): live at once. */
export async function liveTag(server: TestServer, options: { key?: string; domain?: string } = {}): Promise<GeneratedTag> {
  const key = options.key ?? server.partner.apiKey;
  const domain = options.domain ?? (key === server.partner.apiKey ? server.partner.domain : undefined);
  return generateTag(server, { key, ...(domain ? { domain } : {}) });
}

export interface SentEvent {
  id?: string;
  event_name: string;
  event_time?: string;
  muid?: string;
  data?: unknown;
}

export async function collect(server: TestServer, tagId: string, events: SentEvent[]): Promise<ApiResponse> {
  return api(server).post('/v1/collect', { tagId, events });
}

export async function collectOk(server: TestServer, tagId: string, events: SentEvent[]): Promise<void> {
  const res = await collect(server, tagId, events);
  expectStatus(res, 202, 'collect');
}

/** The merchant's tag summaries from the merchant list (walks every page). */
export async function tagsOf(server: TestServer, merchantId: string, key = server.partner.apiKey): Promise<Json[]> {
  for (let page = 1; ; page++) {
    const res = await api(server, key).get(`/v1/partners/merchant?limit=100&page=${page}`);
    expectStatus(res, 200, 'list merchants');
    const merchant = (res.body.merchants as Json[]).find((m) => m.merchantId === merchantId);
    if (merchant) return merchant.tags as Json[];
    if (!res.body.pagination.hasNextPage) throw new Error(`merchant ${merchantId} not listed`);
  }
}

export async function listEvents(
  server: TestServer,
  merchantId: string,
  query: Record<string, string | number> = {},
  key = server.partner.apiKey,
): Promise<ApiResponse> {
  const params = new URLSearchParams({ merchantId, ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) });
  return api(server, key).get(`/v1/partners/events?${params}`);
}
