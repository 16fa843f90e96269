import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
// tRPC's own shape builder (what its adapters use), so a refusal answered here is the body tRPC would send.
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { type AppDeps, type Context, requestContext } from '../../context.js';
import type { AuthenticatedPartner } from '../../features/partners/authenticate.js';
import { AppError, errorResponse, isServerFailure, toAppError } from '../../kernel/errors.js';
import { MAX_BODY_BYTES } from '../../kernel/request-limits.js';
import { appRouter } from '../../routes/_app.js';
import { appErrorOf, toTrpcError } from '../../routes/procedures.js';
import { type RateLimitClient, UNKNOWN_BODY_BYTES } from '../../runtime/rate-limits.js';
import { bodyBytesRead, readBody } from '../http/body.js';
import { markRateLimitScope } from '../http/rate-limit-scope.js';
import { clientOf, visitorOf } from '../http/request-client.js';
import { sendError } from '../http/respond.js';

export const TRPC_PREFIX = '/trpc';
/** The most calls one /trpc request may batch (each is charged to the rate limits). */
const MAX_TRPC_BATCH = 10;

/** Calls named by a /trpc path (`a,b,c` in a batch): commas counted in one pass. */
function batchSize(path: string): number {
  let calls = 1;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 0x2c) calls++;
  return calls;
}

/** The public collector's procedure (its chunked bodies are read before tRPC: their size is charged). */
const COLLECT_PROCEDURE = 'collect.ingest';

/** The tRPC subscription that opens an event stream. */
const STREAM_PROCEDURE = 'events.stream';

/**
 * Authentication and the stream cap before the stream starts, as on REST. Otherwise the authenticated partner goes
 * into the context, and `take` in openEventStream stays the one that holds a slot.
 */
async function admitStream(
  deps: AppDeps,
  req: IncomingMessage & { requestId: string },
  res: ServerResponse,
  client: RateLimitClient,
): Promise<AuthenticatedPartner | null> {
  let refusal: AppError | null;
  let partner: AuthenticatedPartner | null = null;
  try {
    partner = await deps.limits.authenticate(req.headers.authorization, client);
    refusal = deps.streamCaps.refusal(partner.id);
    if (refusal) markRateLimitScope(res, 'streams');
  } catch (error) {
    refusal = appErrorOf(error, { retrySafe: true });
  }
  if (!refusal) return partner;
  const ctx = requestContext(deps, {
    requestId: req.requestId,
    authorization: req.headers.authorization,
    partner,
    client,
  });
  const shape = getErrorShape({
    config: appRouter._def._config,
    ctx,
    error: toTrpcError(refusal),
    input: undefined,
    path: STREAM_PROCEDURE,
    type: 'subscription',
  });
  const body = JSON.stringify({ error: shape });
  req.resume();
  res.writeHead(errorResponse(refusal).status, {
    ...refusal.headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
  return null;
}

/** tRPC over HTTP at /trpc: the same procedures, errors carrying the same `code` in `error.data`. */
export function createTrpcHandler(deps: AppDeps) {
  return async (req: IncomingMessage & { requestId: string }, res: ServerResponse, pathname: string) => {
    // Rate limits are charged per call by the procedures' middleware (src/routes/procedures.ts: the same policy
    // as REST). A batch is at most MAX_TRPC_BATCH calls (checked here, before anything is read).
    const path = pathname.slice(TRPC_PREFIX.length + 1);
    if (batchSize(path) > MAX_TRPC_BATCH) {
      req.resume();
      sendError(res, new AppError('VALIDATION_ERROR', `A tRPC batch has at most ${MAX_TRPC_BATCH} calls`));
      return;
    }
    const client = clientOf(req, res);
    if (client.unchargedBytes === UNKNOWN_BODY_BYTES && path.split(',').includes(COLLECT_PROCEDURE)) {
      // A chunked body for the collector: read here so that its size reaches the address's byte
      // budget (collectorProcedure charges it); tRPC takes a body already read from `req.body`.
      try {
        (req as IncomingMessage & { body?: string }).body = await readBody(req);
      } catch (error) {
        sendError(res, toAppError(error));
        return;
      }
      client.unchargedBytes = bodyBytesRead(req);
    }
    let partner: AuthenticatedPartner | null = null;
    if (path === STREAM_PROCEDURE) {
      partner = await admitStream(deps, req, res, client);
      if (!partner) return;
    }
    return nodeHTTPRequestHandler({
      router: appRouter,
      req,
      res,
      path,
      maxBodySize: MAX_BODY_BYTES,
      maxBatchSize: MAX_TRPC_BATCH,
      createContext: (): Context =>
        requestContext(deps, {
          requestId: req.requestId,
          authorization: req.headers.authorization,
          partner,
          client,
          visitor: visitorOf(req),
        }),
      // Retry-After (and the RateLimit-* headers) of a refused call, as on REST.
      responseMeta: ({ errors }) => {
        const headers: Record<string, string> = {};
        for (const error of errors) Object.assign(headers, appErrorOf(error).headers);
        return { headers };
      },
      onError: ({ error }) => {
        const appError = appErrorOf(error);
        // A subscription ended by the shutdown (its final frame) is not a failure.
        if (appError.reason === 'SERVICE_UNAVAILABLE' && deps.streams.isClosed) return;
        if (isServerFailure(appError)) {
          deps.logger.error({ err: error, requestId: req.requestId }, 'request failed');
        }
      },
    });
  };
}
