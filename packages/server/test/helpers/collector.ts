import http from 'node:http';
import type { TestServer } from '../../src/testing/index.js';
import { api, type Json } from './api.js';
import { allEvents as allEventsOf, type GeneratedTag, generateTag } from './fixtures.js';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies in tests are asserted field by field
  json: any;
}

/** One HTTP request to the test server with any `Host` header (fetch cannot set it). */
export function rawRequest(
  baseUrl: string,
  options: { method?: string; path: string; host?: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  const url = new URL(options.path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: options.method ?? 'GET',
        headers: { ...(options.host ? { host: options.host } : {}), ...options.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** The collector host of a tag, from the snippet endpoint. */
export async function collectorHostOf(server: TestServer, tag: GeneratedTag, key = server.partner.apiKey) {
  const res = await api(server, key).get(`/v1/partners/tag/${tag.tagId}/snippet`);
  if (res.status !== 200) throw new Error(`snippet: ${res.status} ${res.text}`);
  return res.body.collectorHost as string;
}

/** POST /e on a collector host. */
export function postEvents(
  baseUrl: string,
  host: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return rawRequest(baseUrl, {
    method: 'POST',
    path: '/e',
    host,
    headers: { 'content-type': 'text/plain;charset=UTF-8', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A tag on the partner's own domain: preverified, live at once. */
export function preverifiedTag(server: TestServer): Promise<GeneratedTag> {
  return generateTag(server, { domain: server.partner.domain });
}

/** Publishes the tag's CNAME in the loopback DNS server. */
export function publishCname(server: TestServer, tag: GeneratedTag): void {
  server.dns.setCname(`${tag.record.name}.${tag.domain}`, tag.record.value);
}

/** A custom-domain tag (a fresh merchant and domain) whose CNAME is published and verified. */
export async function verifiedTag(server: TestServer, domain?: string): Promise<GeneratedTag> {
  const tag = await generateTag(server, domain ? { domain } : {});
  publishCname(server, tag);
  const res = await api(server, server.partner.apiKey).post('/v1/partners/tag/verify', {
    tagId: tag.tagId,
    subdomain: tag.domain,
  });
  if (res.status !== 200) throw new Error(`verify: ${res.status} ${res.text}`);
  return tag;
}

/** The tag's status as the merchant list shows it. */
export async function listedStatus(server: TestServer, tag: GeneratedTag): Promise<string> {
  for (let page = 1; ; page++) {
    const res = await api(server, server.partner.apiKey).get(`/v1/partners/merchant?limit=100&page=${page}`);
    if (res.status !== 200) throw new Error(`list merchants: ${res.status} ${res.text}`);
    const merchant = (res.body.merchants as Json[]).find((m) => m.merchantId === tag.merchantId);
    const found = merchant && (merchant.tags as Json[]).find((t) => t.tagId === tag.tagId);
    if (found) return found.status as string;
    if (!res.body.pagination.hasNextPage) throw new Error(`tag ${tag.tagId} is not listed`);
  }
}

/** Every event of a merchant, walking pages of 100. */
export function allEvents(
  server: TestServer,
  merchantId: string,
  query: Record<string, string | number> = {},
): Promise<Json[]> {
  return allEventsOf(server, merchantId, { limit: 100, ...query });
}
