import { randomBytes } from 'node:crypto';
import net from 'node:net';
import postgres from 'postgres';
import { type ServerProcess, spawnServer as spawnProcess } from '../../src/testing/server-process.js';

const PG_ADMIN_URL = process.env.HARDENING_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.HARDENING_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** True when a TCP connection to host:port opens within `ms`. */
export function tcpAnswers(host: string, port: number, ms = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export const redisAnswers = () => tcpAnswers('127.0.0.1', 6379);
export const postgresAnswers = () => tcpAnswers('127.0.0.1', 5432);

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A throw-away PostgreSQL database for tests that need several processes on one database:
 * TEST_DATABASE_URL's server when set, else 127.0.0.1:5432.
 */
export async function createScratchDatabase(prefix = 'hardening'): Promise<ScratchDatabase> {
  const admin = new URL(PG_ADMIN_URL);
  if (process.env.TEST_DATABASE_URL) {
    const test = new URL(process.env.TEST_DATABASE_URL);
    admin.host = test.host;
    admin.username = test.username;
    admin.password = test.password;
  }
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const sql = postgres(admin.toString(), { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql.unsafe(`create database ${name}`);
  } finally {
    await sql.end({ timeout: 2 });
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const dropper = postgres(admin.toString(), { max: 1, connect_timeout: 3, onnotice: () => {} });
      try {
        await dropper.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end({ timeout: 2 });
      }
    },
  };
}

export type { ServerProcess };

/** Spawns `node --import tsx src/main.ts` with `env` (PORT 0 on 127.0.0.1) and waits until it listens. */
export function spawnServer(
  env: Record<string, string>,
  timeoutMs = 30_000,
  nodeArgs: string[] = [],
): Promise<ServerProcess> {
  return spawnProcess({ env, timeoutMs, nodeArgs });
}

export interface TcpProxy {
  port: number;
  /**
   * `forward` (default): pipe to the target. `refuse`: stop listening, so new connections are
   * refused (ECONNREFUSED, as from a stopped server); `forward` listens again on the same port.
   * `reset`: accept, then close at once (a middlebox dropping connections).
   * `blackhole`: open connections stop forwarding in both directions without closing, and new
   * connections are accepted and never answered (a network partition, a stuck failover); leaving
   * it closes the held connections.
   */
  setMode(mode: ProxyMode): Promise<void>;
  /** Destroys every open proxied connection (both sides). */
  cutAll(): void;
  /** The next `n` connections forward the request but drop the target's response (the client sees a reset). */
  dropResponses(n: number): void;
  /** Connections open right now. */
  openConnections(): number;
  close(): Promise<void>;
}

export type ProxyMode = 'forward' | 'refuse' | 'reset' | 'blackhole';

/** A loopback TCP proxy a test controls, in front of `targetPort`: outages without touching the target. */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let mode: ProxyMode = 'forward';
  let dropping = 0;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const held = new Set<net.Socket>();
  const silence = (pair: { client: net.Socket; upstream: net.Socket }) => {
    pair.client.unpipe(pair.upstream);
    pair.upstream.unpipe(pair.client);
    pair.client.pause();
    pair.upstream.pause();
  };
  const server = net.createServer((client) => {
    if (mode === 'blackhole') {
      held.add(client);
      client.pause();
      client.on('error', () => {}).on('close', () => held.delete(client));
      return;
    }
    if (mode !== 'forward') {
      client.destroy();
      return;
    }
    const upstream = net.connect({ host: targetHost, port: targetPort });
    const pair = { client, upstream };
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    client.pipe(upstream);
    if (dropping > 0) {
      dropping -= 1;
      // The request reaches the server; its answer never reaches the client.
      upstream.once('data', () => close());
    } else {
      upstream.pipe(client);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const cutAll = () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
    for (const socket of held) socket.destroy();
    held.clear();
  };
  return {
    port,
    setMode: async (next) => {
      if (mode === 'blackhole' && next !== 'blackhole') cutAll();
      mode = next;
      if (next === 'blackhole') for (const pair of pairs) silence(pair);
      if (next === 'refuse' && server.listening) {
        // Stop listening at once (the close callback would wait for open connections: don't).
        server.close();
      } else if (next !== 'refuse' && !server.listening) {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, '127.0.0.1', () => {
            server.off('error', reject);
            resolve();
          });
        });
      }
    },
    cutAll,
    dropResponses: (n) => {
      dropping = n;
    },
    openConnections: () => pairs.size,
    close: () =>
      new Promise<void>((resolve) => {
        cutAll();
        if (server.listening) server.close();
        resolve();
      }),
  };
}

/** A postgres URL with its host and port replaced (to go through a proxy). */
export function viaPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(port);
  return parsed.toString();
}
