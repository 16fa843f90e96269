import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';

/**
 * Finding 5 of the security round: a lone UTF-16 surrogate in `event_name`, `id` or `muid` passed
 * validation and failed in PostgreSQL (500 DATABASE_ERROR on the public collector, a broken
 * group-commit batch). Text is now checked at the schema (`isWellFormed`), on every transport.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const LONE = '\ud800';
const tagId = '00000000-0000-4000-8000-000000000000';

async function post(path: string, body: unknown, key?: string) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    // JSON.stringify escapes the lone surrogate as \ud800: the server parses it back into one.
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies asserted field by field
  return { status: res.status, body: (await res.json()) as any };
}

describe('finding 5: text is well-formed Unicode', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['event_name', { event_name: `Page${LONE}View` }],
    ['id', { event_name: 'PageView', id: `evt-${LONE}` }],
    ['muid', { event_name: 'PageView', muid: `m${LONE}` }],
    ['a data value', { event_name: 'PageView', data: { note: `x${LONE}` } }],
    ['a data key', { event_name: 'PageView', data: { [`k${LONE}`]: 1 } }],
  ];
  for (const [where, event] of cases) {
    it(`a lone surrogate in ${where} is a 400 on REST and on tRPC`, async () => {
      const rest = await post('/v1/collect', { tagId, events: [event] });
      expect(rest.status).toBe(400);
      expect(rest.body).toEqual({ message: expect.stringContaining('well-formed Unicode'), code: 'VALIDATION_ERROR' });
      const trpc = await post('/trpc/collect.ingest', { tagId, events: [event] });
      expect(trpc.status).toBe(400);
      expect(trpc.body.error.data.code).toBe('VALIDATION_ERROR');
    });
  }

  it('every procedure refuses it (a merchant name over tRPC and REST)', async () => {
    const trpc = await post('/trpc/merchant.create', { name: `Shop ${LONE}` }, server.partner.apiKey);
    expect(trpc.status).toBe(400);
    expect(trpc.body.error.message).toContain('well-formed Unicode');
    const rest = await post('/v1/partners/merchant', { name: `Shop ${LONE}` }, server.partner.apiKey);
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('VALIDATION_ERROR');
  });

  it('well-formed text outside the BMP still passes (a surrogate pair)', async () => {
    const res = await post('/v1/partners/merchant', { name: 'Shop 🛒' }, server.partner.apiKey);
    expect(res.status).toBe(201);
  });
});
