import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import type { AppDeps, Context } from '../context.js';
import { AppError, toAppError } from '../errors.js';
import { appRouter } from '../routers/_app.js';
import { MAX_BODY_BYTES } from './body.js';
import { clientOf } from './rate-limit.js';
import { restErrorBody, sendError } from './respond.js';

export const TRPC_PREFIX = '/trpc';
/** The most calls one /trpc request may batch (each is charged to the rate limits). */
export const MAX_TRPC_BATCH = 10;

/** Calls named by a /trpc path (`a,b,c` in a batch): commas counted in one pass. */
function batchSize(path: string): number {
  let calls = 1;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 0x2c) calls++;
  return calls;
}

/** tRPC over HTTP at /trpc: the same procedures, errors carrying the same `code` in `error.data`. */
export function createTrpcHandler(deps: AppDeps) {
  return async (req: IncomingMessage & { requestId: string }, res: ServerResponse, pathname: string) => {
    // Rate limits are charged per call by the procedures' middleware (src/trpc.ts: the same policy
    // as REST). A batch is at most MAX_TRPC_BATCH calls (checked here, before anything is read).
    const path = pathname.slice(TRPC_PREFIX.length + 1);
    if (batchSize(path) > MAX_TRPC_BATCH) {
      req.resume();
      sendError(res, new AppError('VALIDATION_ERROR', `A tRPC batch has at most ${MAX_TRPC_BATCH} calls`));
      return;
    }
    const client = clientOf(req, res);
    return nodeHTTPRequestHandler({
      router: appRouter,
      req,
      res,
      path,
      maxBodySize: MAX_BODY_BYTES,
      maxBatchSize: MAX_TRPC_BATCH,
      createContext: (): Context => ({
        ...deps,
        requestId: req.requestId,
        authorization: req.headers.authorization,
        partner: null,
        client,
      }),
      // Retry-After (and the RateLimit-* headers) of a refused call, as on REST.
      responseMeta: ({ errors }) => {
        const headers: Record<string, string> = {};
        for (const error of errors) Object.assign(headers, toAppError(error).headers);
        return { headers };
      },
      onError: ({ error }) => {
        if (restErrorBody(toAppError(error)).status >= 500) {
          deps.logger.error({ err: error, requestId: req.requestId }, 'request failed');
        }
      },
    });
  };
}
