import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../src/app.js';
import { freePort, startTestServer, type TestServer } from '../src/testing/index.js';

let server: TestServer;
let app: RunningApp;
let collectorPort: number;

beforeAll(async () => {
  server = await startTestServer();
  collectorPort = await freePort();
  // A second app on the same database with a collector port and short deadlines (the defaults are
  // 10 s for the headers and 30 s for the request).
  app = await startApp(
    {
      ...server.app.deps.env,
      PORT: 0,
      COLLECTOR_PORT: collectorPort,
      HTTP_HEADERS_TIMEOUT_MS: 600,
      HTTP_REQUEST_TIMEOUT_MS: 600,
    },
    { database: server.app.database, dns: server.app.deps.dns },
  );
});
afterAll(async () => {
  await app?.close();
  await server?.close();
});

/** A slowloris: headers started, never finished. Resolves with what the server sent and when it closed. */
function slowloris(port: number): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('POST /e HTTP/1.1\r\nHost: collector.example\r\nX-Slow: 1');
    });
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, closedAfterMs: Date.now() - started }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error('the server never cut the slow client off'));
    }, 15_000);
  });
}

describe('slow clients', () => {
  it.each([
    ['the main port', () => Number(new URL(app.url).port)],
    ['COLLECTOR_PORT', () => collectorPort],
  ])('%s answers a client that never finishes its headers 408 { message, code } and closes', async (_, port) => {
    const { text } = await slowloris(port());
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ message: expect.any(String), code: 'VALIDATION_ERROR' });
  });
});
