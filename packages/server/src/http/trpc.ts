import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import type { AppDeps, Context } from '../context.js';
import { toAppError } from '../errors.js';
import { appRouter } from '../routers/_app.js';
import { bearerToken } from '../services/partner/authenticate.js';
import { isWellFormedApiKey } from '../services/partner/key-hash.js';
import { MAX_BODY_BYTES } from './body.js';
import { restErrorBody, sendError } from './respond.js';

export const TRPC_PREFIX = '/trpc';

/** tRPC over HTTP at /trpc: the same procedures, errors carrying the same `code` in `error.data`. */
export function createTrpcHandler(deps: AppDeps) {
  return async (req: IncomingMessage & { requestId: string }, res: ServerResponse, pathname: string) => {
    // The same per-key budget as REST (http/rate-limit.ts), for well-formed keys (others fail auth).
    const token = bearerToken(req.headers.authorization);
    if (token !== null && isWellFormedApiKey(token)) {
      try {
        await deps.limits.limitApiKey(req.headers.authorization, res);
      } catch (error) {
        req.resume();
        sendError(res, toAppError(error));
        return;
      }
    }
    return nodeHTTPRequestHandler({
      router: appRouter,
      req,
      res,
      path: pathname.slice(TRPC_PREFIX.length + 1),
      maxBodySize: MAX_BODY_BYTES,
      createContext: (): Context => ({
        ...deps,
        requestId: req.requestId,
        authorization: req.headers.authorization,
        partner: null,
      }),
      onError: ({ error }) => {
        if (restErrorBody(toAppError(error)).status >= 500) {
          deps.logger.error({ err: error, requestId: req.requestId }, 'request failed');
        }
      },
    });
  };
}
