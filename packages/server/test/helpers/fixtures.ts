import { randomBytes, randomUUID } from 'node:crypto';
import type { TestPartner, TestServer } from '../../src/testing/index.js';
import { type ApiResponse, api, type Json } from './api.js';

/** A well-formed UUID that names nothing. */
export const MISSING_ID = randomUUID();

/** A domain no other test uses: `<prefix>-<random>.<tld>`. */
export function uniqueDomain(prefix = 'shop', tld = 'com'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}.${tld}`;
}

function expectStatus(res: ApiResponse, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text}`);
}

export async function createMerchant(
  server: TestServer,
  key = server.partner.apiKey,
  name = 'Merchant',
): Promise<string> {
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

/** Generates a tag (a new merchant and a unique custom domain unless given). */
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

/** Publishes the tag's CNAME (to its own target unless told) in the loopback DNS server. */
export function publishCname(server: TestServer, tag: GeneratedTag, target = tag.record.value): void {
  server.dns.setCname(`${tag.record.name}.${tag.domain}`, target);
}

/** A custom-domain tag whose CNAME is published and verified: `waiting_for_events`. */
export async function verifiedTag(server: TestServer, partner: TestPartner = server.partner): Promise<GeneratedTag> {
  const tag = await generateTag(server, { key: partner.apiKey });
  publishCname(server, tag);
  const res = await api(server, partner.apiKey).post('/v1/partners/tag/verify', {
    tagId: tag.tagId,
    subdomain: tag.domain,
  });
  expectStatus(res, 200, 'verify tag');
  return { ...tag, status: 'waiting_for_events' };
}

/** A preverified tag on the partner's own domain: `active` at once. */
export async function preverifiedTag(server: TestServer, partner: TestPartner = server.partner): Promise<GeneratedTag> {
  return generateTag(server, { key: partner.apiKey, domain: partner.domain });
}

export interface SentEvent {
  id?: string;
  event_name: string;
  event_time?: string;
  muid?: string;
  data?: unknown;
}

export function collect(server: TestServer, tagId: string, events: SentEvent[]): Promise<ApiResponse> {
  return api(server).post('/v1/collect', { tagId, events });
}

export async function collectOk(server: TestServer, tagId: string, events: SentEvent[]): Promise<void> {
  const res = await collect(server, tagId, events);
  expectStatus(res, 202, 'collect');
}

/** The merchant as listed by the merchant list (walks every page). */
export async function listedMerchant(
  server: TestServer,
  merchantId: string,
  key = server.partner.apiKey,
): Promise<Json> {
  for (let page = 1; ; page++) {
    const res = await api(server, key).get(`/v1/partners/merchant?limit=100&page=${page}`);
    expectStatus(res, 200, 'list merchants');
    const merchant = (res.body.merchants as Json[]).find((m) => m.merchantId === merchantId);
    if (merchant) return merchant;
    if (!res.body.pagination.hasNextPage) throw new Error(`merchant ${merchantId} is not listed`);
  }
}

/** The tag summary of `tag` from the merchant list. */
export async function listedTag(server: TestServer, tag: GeneratedTag, key = server.partner.apiKey): Promise<Json> {
  const merchant = await listedMerchant(server, tag.merchantId, key);
  const found = (merchant.tags as Json[]).find((t) => t.tagId === tag.tagId);
  if (!found) throw new Error(`tag ${tag.tagId} is not listed`);
  return found;
}

export function listEvents(
  server: TestServer,
  merchantId: string,
  query: Record<string, string | number> = {},
  key = server.partner.apiKey,
): Promise<ApiResponse> {
  const params = new URLSearchParams({ merchantId });
  for (const [name, value] of Object.entries(query)) params.set(name, String(value));
  return api(server, key).get(`/v1/partners/events?${params}`);
}

/** Every event of a listing, walking the pages with the given query. */
export async function allEvents(
  server: TestServer,
  merchantId: string,
  query: Record<string, string | number> = {},
): Promise<Json[]> {
  const out: Json[] = [];
  for (let page = 1; page < 1000; page++) {
    const res = await listEvents(server, merchantId, { ...query, page });
    expectStatus(res, 200, 'list events');
    out.push(...res.body.events);
    if (!res.body.pagination.hasNextPage) return out;
  }
  throw new Error('too many pages');
}
