import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../src/index.js';
import { type Captured, makeClient, reply, sequence, server, UUID_V4, useMsw } from './helpers.js';

useMsw();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';
const ERASURE = {
  id: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  muid: 'muid_7d2f9a',
  merchantId: MERCHANT_ID,
  suppress: false,
  status: 'pending',
  eventsDeleted: 0,
  createdAt: '2026-11-27T10:00:00.000Z',
  completedAt: null,
};

describe('erasures.create / retrieve and events.list({ muid })', () => {
  it('create POSTs the body with one Idempotency-Key kept across a retry', async () => {
    const { handler, seen } = sequence('post', '/v1/partners/erasures', [
      () => reply({ message: 'busy', code: 'SERVICE_UNAVAILABLE' }, { status: 503 }),
      () => reply(ERASURE, { status: 202 }),
    ]);
    server.use(handler);
    const erasure = await makeClient({ maxRetries: 1 }).erasures.create({
      muid: 'muid_7d2f9a',
      merchantId: MERCHANT_ID,
    });
    expect(erasure).toEqual(ERASURE);
    expect(seen).toHaveLength(2);
    const [first, second] = seen as [Captured, Captured];
    expect(first.body).toEqual({ muid: 'muid_7d2f9a', merchantId: MERCHANT_ID });
    expect(first.headers.get('idempotency-key')).toMatch(UUID_V4);
    expect(second.headers.get('idempotency-key')).toBe(first.headers.get('idempotency-key'));
  });

  it('retrieve GETs the erasure; 404 is a NotFoundError with its code', async () => {
    const path = `/v1/partners/erasures/${ERASURE.id}`;
    const done = { ...ERASURE, status: 'completed', eventsDeleted: 12, completedAt: '2026-11-27T10:00:09.000Z' };
    const { handler } = sequence('get', path, [
      () => reply(done),
      () => reply({ message: 'No erasure', code: 'ERASURE_NOT_FOUND' }, { status: 404 }),
    ]);
    server.use(handler);
    const client = makeClient();
    expect(await client.erasures.retrieve(ERASURE.id)).toEqual(done);
    const error = await client.erasures.retrieve(ERASURE.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe('ERASURE_NOT_FOUND');
  });

  it('events.list sends muid=', async () => {
    const page = {
      events: [],
      pagination: {
        currentPage: 1,
        itemsPerPage: 12,
        totalItems: 0,
        totalPages: 0,
        hasNextPage: false,
        hasPreviousPage: false,
        nextCursor: null,
      },
    };
    const { handler, seen } = sequence('get', '/v1/partners/events', [() => reply(page)]);
    server.use(handler);
    await makeClient().events.list({ merchantId: MERCHANT_ID, muid: 'muid_7d2f9a' });
    expect(seen[0]?.url.searchParams.get('muid')).toBe('muid_7d2f9a');
  });
});
