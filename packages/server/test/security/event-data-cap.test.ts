import { EVENT_DATA_MAX_CHARS } from '@partner/shared-schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';

/**
 * Finding 6 of the security round: one event with 1,000,000 characters of `data` was stored. One
 * event's serialized `data` is now capped (16 KB) in the shared schema, on every way in, and the
 * cap is in the OpenAPI document.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const tagId = '00000000-0000-4000-8000-000000000000';
const collect = async (path: string, data: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tagId, events: [{ event_name: 'PageView', data }] }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies asserted field by field
  return { status: res.status, body: (await res.json()) as any };
};

describe('finding 6: a cap on one event’s data', () => {
  it('data over 16 KB serialized is a 400 VALIDATION_ERROR naming the cap (REST and tRPC)', async () => {
    const big = { blob: 'x'.repeat(1_000_000) };
    const rest = await collect('/v1/collect', big);
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual({
      message: expect.stringContaining(String(EVENT_DATA_MAX_CHARS)),
      code: 'VALIDATION_ERROR',
    });
    const trpc = await collect('/trpc/collect.ingest', { blob: 'x'.repeat(EVENT_DATA_MAX_CHARS) });
    expect(trpc.status).toBe(400);
  });

  it('data at the cap passes validation (then the unknown tag answers 404)', async () => {
    const fits = 'x'.repeat(EVENT_DATA_MAX_CHARS - 2); // JSON adds the two quotes
    const res = await collect('/v1/collect', fits);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('TAG_NOT_FOUND');
  });

  it('the OpenAPI document states the cap', async () => {
    const doc = await (await fetch(`${server.url}/openapi.json`)).text();
    expect(doc).toContain(`at most ${EVENT_DATA_MAX_CHARS} characters serialized`);
  });
});
