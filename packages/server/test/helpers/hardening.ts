import net from 'node:net';
import type { TestKnobs } from '../../src/kernel/test-knobs.js';
import { type ServerProcess, spawnServer as spawnProcess } from '../../src/testing/server-process.js';

export {
  createScratchDatabase,
  postgresAnswers,
  REDIS_URL,
  redisAnswers,
  type ScratchDatabase,
  tcpAnswers,
} from '../../src/testing/services.js';

export type { ServerProcess };

/**
 * Spawns `node --import tsx src/main.ts` with `env` (PORT 0 on 127.0.0.1) and waits until it
 * listens; with `knobs`, src/testing/server-entry.ts (kernel/test-knobs.ts).
 */
export function spawnServer(
  env: Record<string, string>,
  timeoutMs = 30_000,
  nodeArgs: string[] = [],
  knobs?: Partial<TestKnobs>,
): Promise<ServerProcess> {
  return spawnProcess({ env, timeoutMs, nodeArgs, knobs });
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

type ProxyMode = 'forward' | 'refuse' | 'reset' | 'blackhole';

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
