import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../../context.js';
import type { DatabaseHandle } from '../../db/client.js';
import { AppError, toAppError } from '../../kernel/errors.js';
import { type Collector, createCollector } from '../collector/collector-handler.js';
import { literalPathMethods, sendUnrouted } from '../rest/allowed-methods.js';
import { createRestHandler } from '../rest/rest-handler.js';
import { createTrpcHandler, TRPC_PREFIX } from '../trpc/trpc-handler.js';
import { createProxyTrust, setProxyTrust } from './client-address.js';
import { createRouteTemplates, observeRequest } from './metrics-endpoint.js';
import { requestIdOf } from './request-id.js';
import { parseRequestPath, type RequestPath } from './request-path.js';
import { sendError } from './respond.js';
import { createRoutes } from './route-handlers.js';
import { matchRoute, notFound, type TracedRequest } from './run-route.js';

/** Shutdown: once `draining`, every response still to be sent carries `Connection: close`. */
export interface DrainState {
  draining: boolean;
  /** Responses whose request was read and not yet answered. */
  readonly inFlight: Set<ServerResponse>;
}

export function createDrainState(): DrainState {
  return { draining: false, inFlight: new Set() };
}

/** Starts the drain: responses not yet begun will close their connection. */
export function startDrain(state: DrainState): void {
  state.draining = true;
  for (const res of state.inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
}

const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['x-content-type-options', 'nosniff'],
  ['referrer-policy', 'no-referrer'],
  ['x-frame-options', 'DENY'],
];

/** What the access log and the metrics know of a request once it is answered. */
interface RequestSeen {
  /** Worked out first of all; undefined when the path was refused (too long, malformed). */
  path: RequestPath | undefined;
  collectorRequest: boolean;
}

/** The one request listener: request id and security headers on every response, an access log line per request. */
export function createRequestListener(
  deps: AppDeps,
  database: DatabaseHandle,
  baseUrl: string | undefined,
  options: { collectorOnly?: boolean; drain?: DrainState } = {},
) {
  const router = new RequestRouter(deps, database, baseUrl, options.collectorOnly === true);
  const routeTemplate = createRouteTemplates();
  // TRUST_PROXY (env.ts): who may tell us the client's address and scheme (transport/http/client-address.ts).
  const proxyTrust = deps.env.TRUST_PROXY.kind === 'off' ? null : createProxyTrust(deps.env.TRUST_PROXY);

  return async (incoming: IncomingMessage, res: ServerResponse): Promise<void> => {
    const req = incoming as TracedRequest;
    req.requestId = requestIdOf(req);
    if (proxyTrust) setProxyTrust(req, proxyTrust);
    res.setHeader('x-request-id', req.requestId);
    for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
    const started = performance.now();
    const drain = options.drain;
    if (drain) {
      if (drain.draining) {
        refuseWhileDraining(req, res);
        return;
      }
      drain.inFlight.add(res);
    }
    const seen: RequestSeen = { path: undefined, collectorRequest: options.collectorOnly === true };
    // One listener per request: 'close' follows 'finish' for an answered request and comes alone
    // for one the client abandoned (counted by neither the metrics nor the access log, as before).
    res.on('close', () => {
      drain?.inFlight.delete(res);
      if (!res.writableFinished) return;
      const route = seen.path ? routeTemplate(seen.path.route, seen.collectorRequest) : 'unmatched';
      observeRequest(deps, req, res, route, seen.collectorRequest, (performance.now() - started) / 1000);
      logRequest(deps, req, res, seen.path, started);
    });

    try {
      await router.route(req, res, seen);
    } catch (error) {
      deps.logger.error({ err: error, requestId: req.requestId }, 'unhandled request failure');
      if (!res.headersSent)
        sendError(res, toAppError(error, { retrySafe: req.method === 'GET' || req.method === 'HEAD' }));
      else res.end();
    }
  };
}

/** 503 SERVICE_UNAVAILABLE with Retry-After and `Connection: close`, once the body is in. */
function refuseWhileDraining(req: TracedRequest, res: ServerResponse): void {
  res.setHeader('connection', 'close');
  const refuse = () =>
    sendError(
      res,
      new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry shortly', {
        headers: { 'retry-after': '1' },
      }),
    );
  // Answered once the body is in: a socket closed with bytes of it still unread is reset (RST) by the kernel, and the
  // client gets ECONNRESET instead of this 503 (a client that writes headers and body apart met it under load).
  if (req.complete) refuse();
  else req.once('end', refuse).resume();
}

/** The access log line of an answered request. */
function logRequest(
  deps: AppDeps,
  req: TracedRequest,
  res: ServerResponse,
  path: RequestPath | undefined,
  started: number,
): void {
  if (!deps.logger.isLevelEnabled('info')) return;
  const ms = Math.round((performance.now() - started) * 10) / 10;
  // Never the query string; a path refused as too long or malformed is logged by its length.
  const { requestId, method } = req;
  const status = res.statusCode;
  deps.logger.info(
    path
      ? { requestId, method, path: path.pathname, status, ms }
      : { requestId, method, pathLength: req.url?.length ?? 0, status, ms },
    'request',
  );
}

/** Where a request goes: a collector host, a declared route, tRPC, a REST procedure, or 405/404. */
class RequestRouter {
  private readonly collector: Collector;
  private readonly rest: ReturnType<typeof createRestHandler>;
  private readonly trpc: ReturnType<typeof createTrpcHandler>;
  private readonly routes: ReturnType<typeof createRoutes>;

  constructor(
    deps: AppDeps,
    database: DatabaseHandle,
    baseUrl: string | undefined,
    private readonly collectorOnly: boolean,
  ) {
    this.collector = createCollector(deps);
    this.rest = createRestHandler(deps);
    this.trpc = createTrpcHandler(deps);
    this.routes = createRoutes(deps, database, baseUrl);
  }

  async route(req: TracedRequest, res: ServerResponse, seen: RequestSeen): Promise<void> {
    // The path is worked out once, here, before anything else (over 8 KB: 414 at once).
    const path = parseRequestPath(req.url);
    seen.path = path;
    const { pathname, route } = path;
    // A request for a tag's collector host (its CNAME) is the first-party collector's (http/collector/).
    const collectorHost = await this.collector.match(req, pathname);
    if (collectorHost !== null) seen.collectorRequest = true;
    if (collectorHost !== null || this.collectorOnly) {
      if (collectorHost !== null) await this.collector.handle(req, res, collectorHost, pathname);
      else notFound(res);
      return;
    }
    const method = req.method ?? 'GET';
    const matched = matchRoute(this.routes, path);
    if (matched) {
      await matched.run(req, res, path);
    } else if (pathname === TRPC_PREFIX || pathname.startsWith(`${TRPC_PREFIX}/`)) {
      res.setHeader('cache-control', 'no-store');
      await this.trpc(req, res, pathname);
    } else if (route.startsWith('/v1/')) {
      res.setHeader('cache-control', 'no-store');
      // A literal path wins over a template it fits (`DELETE /tag/verify` is not a `{tagId}`);
      // preflights and HEAD keep the REST handler's own answers.
      const literal = method === 'OPTIONS' || method === 'HEAD' ? undefined : literalPathMethods(route);
      if (literal && !literal.includes(method)) sendUnrouted(res, route, method);
      else await this.rest(req, res, path, () => sendUnrouted(res, route, method));
    } else {
      // A known path with another method: 405 with Allow; anything else 404.
      sendUnrouted(res, route, method);
    }
  }
}
