import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { MAX_URL_LENGTH, parseRequestPath, trimTrailingSlashes } from '../../src/transport/http/request-path.js';

/**
 * Finding 1 of the security round: `pathname.replace(/\/+$/, '')` was quadratic on a run of
 * slashes followed by another character (a 16 KB path of `/`: 0.38 s of CPU before any
 * authentication or limit; 8 at once held /healthz for 3 s). The path is now normalised once, in
 * linear time, and targets over 8 KB are refused with 414 before any work.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

interface RawResponse {
  status: number;
  contentType: string;
  body: { message?: unknown; code?: unknown } | undefined;
}

/** One request with the path exactly as given (fetch and URL would normalise it). */
function send(path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method: 'GET', path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        let body: RawResponse['body'];
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('finding 1: path normalisation', () => {
  it('a 16 KB path of slashes is refused with 414 and a JSON error', async () => {
    const res = await send(`/x${'/'.repeat(16_000)}y`);
    expect(res.status).toBe(414);
    expect(res.contentType).toMatch(/^application\/json/);
    expect(res.body).toEqual({ message: expect.stringContaining('too long'), code: 'VALIDATION_ERROR' });
  });

  it('long slash runs under the limit are routed (404 JSON, never a 500)', async () => {
    // A target of slashes only used to throw in `new URL(target, base)` (read as `//host`): a 500.
    for (const path of ['/'.repeat(MAX_URL_LENGTH), `/x${'/'.repeat(8000)}y`, `/v1${'/'.repeat(8000)}y`]) {
      const res = await send(path);
      expect(res.status, path.slice(0, 10)).toBe(404);
      expect(res.body).toEqual({ message: 'Not found', code: 'NOT_FOUND' });
    }
    // Trailing slashes still route as before (REST paths ignore case and trailing slashes).
    const health = await send(`/v1/partners/merchant${'/'.repeat(3)}`);
    expect(health.status).toBe(401);
  });

  it('/healthz answers while 8 such requests arrive at once', async () => {
    const attack = Array.from({ length: 8 }, () => send(`/x${'/'.repeat(8000)}y`));
    const health = await send('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    expect((await Promise.all(attack)).map((r) => r.status)).toEqual(Array(8).fill(404));
  });

  it('request line and headers over 16 KB: 431 with a JSON error', async () => {
    const big = await send('/healthz', { 'x-big': 'a'.repeat(17 * 1024) });
    expect(big.status).toBe(431);
    expect(big.body).toEqual({ message: expect.stringContaining('too large'), code: 'VALIDATION_ERROR' });
    const longUrl = await send(`/${'a'.repeat(20_000)}`);
    expect(longUrl.status).toBe(431);
    expect(longUrl.body?.code).toBe('VALIDATION_ERROR');
  });

  it('the trailing-slash scan is linear: examined characters grow with the input, not its square', () => {
    const steps = (n: number) => {
      const meter = { steps: 0 };
      // Worst case of the old regex: slashes followed by another character, then a trailing run.
      trimTrailingSlashes(`/x${'/'.repeat(n)}y${'/'.repeat(n)}`, meter);
      return meter.steps;
    };
    expect(steps(1000)).toBe(1000);
    expect(steps(8000)).toBe(8000);
    expect(parseRequestPath(`/V1/Collect${'/'.repeat(5)}?a=1`)).toEqual({
      pathname: `/V1/Collect${'/'.repeat(5)}`,
      route: '/v1/collect',
    });
    expect(() => parseRequestPath('/'.repeat(MAX_URL_LENGTH + 1))).toThrow(/too long/);
  });
});
