import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { createMerchant, preverifiedTag } from '../helpers/fixtures.js';
import { corsHeaders, createSession, ORIGIN, OTHER_ORIGIN, summaryPath } from './session-helpers.js';

// CORS for merchant sessions only, through REST over HTTP: the allowed origins of a session get
// their origin back, nobody gets `*`, and a partner key never gets a CORS header.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('merchant sessions: CORS', () => {
  it('answers a session’s allowed origin with that origin (never *) and Vary: Origin', async () => {
    const tag = await preverifiedTag(server);
    const second = 'http://localhost:5173';
    const { token } = await createSession(server, server.partner.apiKey, tag.merchantId, {
      allowedOrigins: [ORIGIN, second],
    });
    for (const origin of [ORIGIN, second]) {
      for (const path of [summaryPath(tag.merchantId), `/v1/partners/tag/${tag.tagId}`]) {
        const res = await api(server, token).get(path, { origin });
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBe(origin);
        expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
        expect(res.headers.get('access-control-expose-headers')).toContain('x-request-id');
      }
    }
  });

  it('gives another origin no CORS header (the browser then hides the answer)', async () => {
    const tag = await preverifiedTag(server);
    const { token } = await createSession(server, server.partner.apiKey, tag.merchantId);
    for (const origin of [OTHER_ORIGIN, 'https://admin.partner.example:8443', 'http://admin.partner.example']) {
      for (const path of [summaryPath(tag.merchantId), `/v1/partners/tag/${tag.tagId}`]) {
        const res = await api(server, token).get(path, { origin });
        expect(res.status).toBe(200);
        expect(corsHeaders(res)).toEqual({});
        expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
      }
    }
  });

  it('never gives a partner key a CORS header, from any origin, on any answer', async () => {
    const tag = await preverifiedTag(server);
    const key = api(server, server.partner.apiKey);
    for (const origin of [ORIGIN, OTHER_ORIGIN, 'null']) {
      const answers = [
        await key.get(summaryPath(tag.merchantId), { origin }),
        await key.get(`/v1/partners/tag/${tag.tagId}`, { origin }),
        await key.get('/v1/partners/merchant', { origin }),
        await key.post('/v1/partners/merchant', { name: 'M' }, { origin }),
        await key.get(summaryPath('not-a-uuid'), { origin }),
      ];
      for (const res of answers) expect(corsHeaders(res)).toEqual({});
    }
    const wrongKey = await api(server, 'mp_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').get(summaryPath(tag.merchantId), {
      origin: ORIGIN,
    });
    expect(wrongKey.status).toBe(401);
    expect(corsHeaders(wrongKey)).toEqual({});
  });

  it('lets an allowed origin read its refusals: 403 SESSION_SCOPE with the origin', async () => {
    const merchantId = await createMerchant(server);
    const { token } = await createSession(server, server.partner.apiKey, merchantId);
    const res = await api(server, token).get('/v1/partners/merchant', { origin: ORIGIN });
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });

  it('lets a page read the 401 of a session token that no longer authenticates, from any origin', async () => {
    const unknown = 'ms_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const res = await api(server, unknown).get(summaryPath(await createMerchant(server)), { origin: OTHER_ORIGIN });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
    expect(res.headers.get('access-control-allow-origin')).toBe(OTHER_ORIGIN);
    expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
  });
});

describe('merchant sessions: preflights', () => {
  const preflight = (path: string, origin = ORIGIN) =>
    api(server).request('OPTIONS', path, {
      headers: {
        origin,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, x-partner-sdk',
      },
    });

  it('answers 204 with methods, headers and max-age on every session-readable path, for any origin', async () => {
    const merchantId = await createMerchant(server);
    const paths = [
      summaryPath(merchantId),
      `/v1/partners/stats/timeseries?merchantId=${merchantId}`,
      '/v1/partners/stats/breakdown',
      '/v1/partners/tag/9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
    ];
    for (const path of paths) {
      for (const origin of [ORIGIN, OTHER_ORIGIN]) {
        const res = await preflight(path, origin);
        expect(res.status).toBe(204);
        expect(res.text).toBe('');
        expect(corsHeaders(res)).toEqual({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': 'GET',
          'access-control-allow-headers': expect.stringMatching(/Authorization.*Content-Type.*X-Partner-Sdk/),
          'access-control-max-age': '600',
        });
        expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
      }
    }
  });

  it('does not answer preflights of the other paths: no 204, no CORS header (the browser stops there)', async () => {
    const paths = [
      '/v1/partners/merchant',
      '/v1/partners/tag/generate',
      '/v1/partners/events',
      '/v1/collect',
      // Creating a session takes the API key: a page never preflights it.
      '/v1/partners/merchant/9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f/sessions',
    ];
    for (const path of paths) {
      const res = await preflight(path);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(corsHeaders(res)).toEqual({});
    }
  });
});
