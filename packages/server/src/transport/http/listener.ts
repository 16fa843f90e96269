import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { AppDeps } from '../../context.js';
import type { Env } from '../../kernel/env.js';
import { AppError, toAppError } from '../../kernel/errors.js';
import { listenError } from '../../kernel/startup-error.js';
import type { Part } from '../../runtime/lifecycle.js';
import { answerClientError } from './client-error.js';
import { handleMetrics, METRICS_PATH } from './metrics-endpoint.js';
import { MAX_HEADER_BYTES } from './request-path.js';
import { sendError } from './respond.js';
import { type DrainState, startDrain } from './server.js';

/** An HTTP listener with the slow-client protection every port gets. */
function createListener(env: Env): http.Server {
  const server = http.createServer({
    connectionsCheckingInterval: Math.min(1_000, env.HTTP_HEADERS_TIMEOUT_MS),
    maxHeaderSize: MAX_HEADER_BYTES,
  });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = env.HTTP_HEADERS_TIMEOUT_MS;
  server.requestTimeout = Math.max(env.HTTP_REQUEST_TIMEOUT_MS, env.HTTP_HEADERS_TIMEOUT_MS);
  server.on('clientError', answerClientError);
  return server;
}

/** Listens on `port`; a port in use or not allowed fails with a StartupError naming the setting. */
function listen(server: http.Server, port: number, host: string, setting: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, port, host, setting));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/** Stops accepting and resolves once every connection has ended. */
function drainServer(server: http.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    let idle: NodeJS.Timeout | undefined;
    const linger = setTimeout(
      () => {
        server.closeIdleConnections();
        idle = setInterval(() => server.closeIdleConnections(), 50);
      },
      Math.min(server.keepAliveTimeout, graceMs),
    );
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    net.Server.prototype.close.call(server, () => {
      clearTimeout(linger);
      clearInterval(idle);
      clearTimeout(force);
      resolve();
    });
  });
}

/**
 * Resolves once `server` has taken every connection the kernel completed before this call. libuv takes one connection
 * from the kernel's accept queue per event-loop turn, so under load completed connections wait there for seconds,
 * their requests sent, and closing the listener resets them all.
 */
function takeQueued(server: http.Server, maxMs: number): Promise<void> {
  const bound = server.address();
  if (maxMs <= 0 || bound === null || typeof bound === 'string') return Promise.resolve();
  const wildcard = bound.address === '0.0.0.0' || bound.address === '::';
  const marker = net.connect({ port: bound.port, host: wildcard ? '127.0.0.1' : bound.address });
  const host = (address: string | undefined) => address?.replace(/^::ffff:/, '');
  return new Promise<void>((resolve) => {
    const taken: net.Socket[] = [];
    const done = () => {
      clearTimeout(timer);
      server.off('connection', onConnection);
      marker.destroy();
      resolve();
    };
    const check = () => {
      const own = taken.find(
        (socket) => socket.remotePort === marker.localPort && host(socket.remoteAddress) === host(marker.localAddress),
      );
      if (!own) return;
      own.destroy();
      done();
    };
    const onConnection = (socket: net.Socket) => {
      taken.push(socket);
      check();
    };
    // The marker's port is known from 'connect'; the server may take it before or after that.
    server.on('connection', onConnection);
    marker.on('connect', check).on('error', done);
    const timer = setTimeout(done, maxMs);
  });
}

/** The URL clients reach a listener at (`localhost` for a wildcard host). */
export function urlOf(server: http.Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}`;
}

export interface ListenerPart extends Part {
  readonly server: http.Server;
}

/** A listener as a part: listens at start. */
export function listenerPart(
  name: string,
  env: Env,
  port: { port: number; setting: string },
  requestListener: () => http.RequestListener,
): ListenerPart {
  const server = createListener(env);
  let drained: Promise<void> | undefined;
  return {
    name,
    server,
    async start() {
      server.on('request', requestListener());
      await listen(server, port.port, env.HOST, port.setting);
    },
    stop: {
      // Waited for before the drain state's turn in this phase: no answer tells a client to
      // reconnect while the listener still listens (a reconnect queued behind our own is reset).
      'stop-accepting': async ({ remainingMs }) => {
        await takeQueued(server, remainingMs());
        drained = drainServer(server, remainingMs());
      },
      drain: () => drained,
    },
  };
}

/** Every response from now on closes its connection; requests on open sockets are answered 503. */
export function drainStatePart(drain: DrainState): Part {
  return { name: 'drain-state', stop: { 'stop-accepting': () => startDrain(drain) } };
}

/** METRICS_PORT: GET /metrics without a token, nothing else (keep this port private). */
export function metricsOnlyListener(deps: AppDeps): http.RequestListener {
  return (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    const answer = pathname === METRICS_PATH ? handleMetrics(deps, req, res, { open: true }) : Promise.resolve(false);
    void answer.then(
      (answered) => answered || sendError(res, new AppError('NOT_FOUND', 'Not found')),
      (error: unknown) => sendError(res, toAppError(error)),
    );
  };
}
