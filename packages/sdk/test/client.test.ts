import { afterEach, describe, expect, it, vi } from 'vitest';
import { PartnerClient, PartnerError } from '../src/index.js';
import { API_KEY, BASE_URL, makeClient, reply, sequence, server, useMsw } from './helpers.js';

useMsw();

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('PartnerClient', () => {
  it('has the documented defaults', () => {
    const client = makeClient();
    expect(client.maxRetries).toBe(2);
    expect(client.timeout).toBe(60_000);
    expect(client.baseURL).toBe(BASE_URL);
    expect(client.apiKey).toBe(API_KEY);
  });

  it('falls back to PARTNER_API_KEY and PARTNER_BASE_URL', async () => {
    vi.stubEnv('PARTNER_API_KEY', 'mp_live_from_env');
    vi.stubEnv('PARTNER_BASE_URL', `${BASE_URL}/`);
    const client = new PartnerClient();
    expect(client.apiKey).toBe('mp_live_from_env');
    expect(client.baseURL).toBe(BASE_URL);
    const { handler, seen } = sequence('get', '/v1/partners/merchant', [() => reply({ merchants: [] })]);
    server.use(handler);
    await client.merchants.list();
    expect(seen[0]?.headers.get('authorization')).toBe('Bearer mp_live_from_env');
  });

  it('explicit options win over the environment', () => {
    vi.stubEnv('PARTNER_API_KEY', 'mp_live_from_env');
    vi.stubEnv('PARTNER_BASE_URL', 'https://env.example');
    const client = new PartnerClient({ apiKey: 'mp_live_explicit', baseURL: 'https://explicit.example' });
    expect(client.apiKey).toBe('mp_live_explicit');
    expect(client.baseURL).toBe('https://explicit.example');
  });

  it('throws a clear error when no API key is found', () => {
    vi.stubEnv('PARTNER_API_KEY', '');
    expect(() => new PartnerClient({ baseURL: BASE_URL })).toThrow(PartnerError);
    expect(() => new PartnerClient({ baseURL: BASE_URL })).toThrow(/PARTNER_API_KEY/);
  });

  it('throws a clear error when no base URL is found, or it is not http(s)', () => {
    vi.stubEnv('PARTNER_BASE_URL', '');
    expect(() => new PartnerClient({ apiKey: API_KEY })).toThrow(/PARTNER_BASE_URL/);
    expect(() => new PartnerClient({ apiKey: API_KEY, baseURL: 'api.example.com' })).toThrow(/absolute http\(s\) URL/);
    expect(() => new PartnerClient({ apiKey: API_KEY, baseURL: 'ftp://api.example.com' })).toThrow(PartnerError);
  });

  it('works where process does not exist', () => {
    const saved = globalThis.process;
    // Simulates a browser or an edge runtime for the duration of the constructor.
    Object.defineProperty(globalThis, 'process', { value: undefined, configurable: true, writable: true });
    try {
      expect(() => new PartnerClient({ baseURL: BASE_URL })).toThrow(/No API key/);
      expect(new PartnerClient({ apiKey: API_KEY, baseURL: BASE_URL }).apiKey).toBe(API_KEY);
    } finally {
      Object.defineProperty(globalThis, 'process', { value: saved, configurable: true, writable: true });
    }
  });

  it('rejects invalid maxRetries and timeout', () => {
    expect(() => makeClient({ maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => makeClient({ timeout: Number.NaN })).toThrow(/timeout/);
  });

  it('withOptions returns a configured copy and leaves the original alone', async () => {
    const original = makeClient({ headers: { 'X-Team': 'a', 'X-Keep': 'k' }, maxRetries: 5 });
    const copy = original.withOptions({ apiKey: 'mp_live_other', timeout: 1_000, headers: { 'X-Team': 'b' } });
    expect(copy).toBeInstanceOf(PartnerClient);
    expect(copy).not.toBe(original);
    expect(copy.apiKey).toBe('mp_live_other');
    expect(copy.timeout).toBe(1_000);
    expect(copy.maxRetries).toBe(5);
    expect(copy.baseURL).toBe(BASE_URL);
    expect(original.apiKey).toBe(API_KEY);
    expect(original.timeout).toBe(60_000);

    const { handler, seen } = sequence('get', '/v1/partners/merchant', [() => reply({ merchants: [] })]);
    server.use(handler);
    await copy.merchants.list();
    await original.merchants.list();
    expect(seen[0]?.headers.get('authorization')).toBe('Bearer mp_live_other');
    expect(seen[0]?.headers.get('x-team')).toBe('b');
    expect(seen[0]?.headers.get('x-keep')).toBe('k');
    expect(seen[1]?.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
    expect(seen[1]?.headers.get('x-team')).toBe('a');
  });

  it('withOptions can point at another server', async () => {
    const copy = makeClient().withOptions({ baseURL: 'https://other.partner.test' });
    const { http } = await import('msw');
    let hit = false;
    server.use(
      http.get('https://other.partner.test/v1/partners/merchant', () => {
        hit = true;
        return reply({ merchants: [] });
      }),
    );
    await copy.merchants.list();
    expect(hit).toBe(true);
  });
});

describe('secrets', () => {
  it('does not show the API key when the client is logged or serialised', async () => {
    const { inspect } = await import('node:util');
    const client = makeClient({ apiKey: 'mp_live_secret_value' });
    expect(client.apiKey).toBe('mp_live_secret_value');
    expect(inspect(client, { depth: 5 })).not.toContain('mp_live_secret_value');
    expect(JSON.stringify(client)).not.toContain('mp_live_secret_value');
  });
});
