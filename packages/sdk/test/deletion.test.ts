import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../src/index.js';
import { API_KEY, type Captured, makeClient, reply, sequence, server, useMsw } from './helpers.js';

useMsw();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';
const TAG_ID = '0b8e3b0e-5f7a-4e58-8f43-5d3e1c2a9b77';
const MERCHANT = { merchantId: MERCHANT_ID, name: 'Acme', createdAt: '2026-11-22T10:00:00.000Z', tags: [] };

describe('merchants.retrieve / update / delete and tags.delete', () => {
  it('merchants.retrieve sends GET /v1/partners/merchant/{id}', async () => {
    const { handler, seen } = sequence('get', `/v1/partners/merchant/${MERCHANT_ID}`, [() => reply(MERCHANT)]);
    server.use(handler);
    expect(await makeClient().merchants.retrieve(MERCHANT_ID)).toEqual(MERCHANT);
    expect(seen[0]?.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
  });

  it('merchants.update sends PATCH {name} without an Idempotency-Key and is retried on 503', async () => {
    const { handler, seen } = sequence('patch', `/v1/partners/merchant/${MERCHANT_ID}`, [
      () => reply({ message: 'busy', code: 'SERVICE_UNAVAILABLE' }, { status: 503 }),
      () => reply({ ...MERCHANT, name: 'Renamed' }),
    ]);
    server.use(handler);
    const renamed = await makeClient({ maxRetries: 1 }).merchants.update(MERCHANT_ID, { name: 'Renamed' });
    expect(renamed.name).toBe('Renamed');
    expect(seen).toHaveLength(2);
    const req = seen[0] as Captured;
    expect(req.method).toBe('PATCH');
    expect(req.body).toEqual({ name: 'Renamed' });
    expect(req.headers.get('content-type')).toBe('application/json');
    expect(req.headers.get('idempotency-key')).toBeNull();
  });

  it('merchants.delete resolves with the 202 body', async () => {
    const body = { merchantId: MERCHANT_ID, deleted: true, purge: 'pending' };
    const { handler, seen } = sequence('delete', `/v1/partners/merchant/${MERCHANT_ID}`, [
      () => reply(body, { status: 202 }),
    ]);
    server.use(handler);
    expect(await makeClient().merchants.delete(MERCHANT_ID)).toEqual(body);
    expect(seen[0]?.method).toBe('DELETE');
  });

  it('a deleted merchant is a NotFoundError with its code', async () => {
    const { handler } = sequence('get', `/v1/partners/merchant/${MERCHANT_ID}`, [
      () => reply({ message: 'No merchant', code: 'MERCHANT_NOT_FOUND' }, { status: 404 }),
    ]);
    server.use(handler);
    const error = await makeClient()
      .merchants.retrieve(MERCHANT_ID)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe('MERCHANT_NOT_FOUND');
  });

  it('tags.delete sends DELETE /v1/partners/tag/{id}', async () => {
    const { handler, seen } = sequence('delete', `/v1/partners/tag/${TAG_ID}`, [
      () => reply({ tagId: TAG_ID, deleted: true }),
    ]);
    server.use(handler);
    expect(await makeClient().tags.delete(TAG_ID)).toEqual({ tagId: TAG_ID, deleted: true });
    expect(seen[0]?.method).toBe('DELETE');
  });
});
