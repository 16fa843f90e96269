import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';

/** Sends one raw HTTP/1.1 request on `socket` and resolves with the response head. */
function request(socket: net.Socket, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        socket.off('data', onData);
        resolve(head.slice(0, head.indexOf('\r\n\r\n')));
      }
    };
    socket.on('data', onData).once('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`);
  });
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * The shutdown race behind connection resets: a connection still in the kernel's accept queue when
 * a listener closes is reset. Shutdown answers `Connection: close`, which makes clients reconnect at
 * once; so the listener must be closed before the first such answer (after taking the connections
 * the kernel completed before close(): listener.ts), and a reconnecting client is refused (it knows
 * nothing was sent), never reset.
 */
describe('shutdown closes the listener before telling clients to reconnect', () => {
  let server: TestServer | undefined;
  // Started in a hook (hookTimeout): the start (migrations on PGlite) took 18 s alone and over the
  // 30 s test timeout on a loaded machine; the test itself only talks to it and closes it.
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('stops listening; then a kept-alive socket gets 503 Connection: close and a new one is refused', async () => {
    const { app, url } = server!;
    const port = Number(new URL(url).port);
    const kept = await connect(port);
    expect(await request(kept, '/healthz')).toMatch(/^HTTP\/1\.1 200/);

    const closing = app.close(5_000);
    await vi.waitFor(() => expect(app.server.listening).toBe(false));

    const drained = await request(kept, '/healthz');
    expect(drained).toMatch(/^HTTP\/1\.1 503/);
    expect(drained.toLowerCase()).toContain('connection: close');
    await expect(connect(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    kept.destroy();
    await closing;
  });
});
