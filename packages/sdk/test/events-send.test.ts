// client.events.send: ids are fixed before the first attempt, so every retry sends the same events
// (the collector stores an id once per merchant) and the caller learns them.
import { describe, expect, it } from 'vitest';
import { PartnerClient } from '../src/index.js';

describe('client.events.send', () => {
  it('gives each event an id before the first attempt and resends the same body on a retry', async () => {
    const bodies: string[] = [];
    const requests: Array<{ url: string; method: string }> = [];
    const fetch = async (input: Request | URL | string, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init);
      requests.push({ url: request.url, method: request.method });
      bodies.push(await request.text());
      // The first attempt reaches the server but its answer is lost: a retry must not duplicate.
      if (bodies.length === 1) throw new TypeError('fetch failed');
      return new Response(JSON.stringify({ accepted: 2 }), {
        status: 202,
        headers: { 'content-type': 'application/json' },
      });
    };
    const client = new PartnerClient({ apiKey: 'mp_live_test', baseURL: 'http://api.test', fetch, maxRetries: 2 });
    const when = new Date('2026-11-22T10:00:00.000Z');
    const result = await client.events.send({
      tagId: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
      events: [
        { event_name: 'PageView', event_time: when, data: { path: '/' } },
        { id: 'mine-1', event_name: 'Purchase', data: { value: 42 } },
      ],
    });
    expect(requests).toHaveLength(2);
    expect(requests[0]).toEqual({ url: 'http://api.test/v1/collect', method: 'POST' });
    expect(bodies[1]).toBe(bodies[0]);
    const sent = JSON.parse(bodies[0] as string) as { tagId: string; events: Array<Record<string, unknown>> };
    expect(sent.events[0]).toMatchObject({ event_name: 'PageView', event_time: '2026-11-22T10:00:00.000Z' });
    expect(sent.events[0]?.id).toMatch(/^evt_[0-9a-f-]{36}$/);
    expect(sent.events[1]?.id).toBe('mine-1');
    expect(result).toEqual({ accepted: 2, ids: [sent.events[0]?.id, 'mine-1'] });
  });

  it('client.tags.snippet GETs the tag snippet path', async () => {
    const seen: string[] = [];
    const fetch = async (input: Request | URL | string, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init);
      seen.push(`${request.method} ${request.url}`);
      const body = {
        tagId: 't',
        collectorHost: 'edge-k3j9x2.acme-store.com',
        scriptUrl: 'https://x/t.js',
        html: '<script></script>',
      };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const client = new PartnerClient({ apiKey: 'mp_live_test', baseURL: 'http://api.test', fetch });
    const snippet = await client.tags.snippet('9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f');
    expect(seen).toEqual(['GET http://api.test/v1/partners/tag/9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f/snippet']);
    expect(snippet.collectorHost).toBe('edge-k3j9x2.acme-store.com');
  });
});
