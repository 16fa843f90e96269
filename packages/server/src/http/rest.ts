import type { IncomingMessage, ServerResponse } from 'node:http';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import type { AppDeps, Context } from '../context.js';
import { type AppError, isServerFailure, toAppError } from '../errors.js';
import { appRouter } from '../routers/_app.js';
import type { AuthenticatedPartner } from '../services/partner/authenticate.js';
import { appErrorOf } from '../trpc.js';
import { readJsonBody } from './body.js';
import { rejectReservedQueryKeys } from './guards.js';
import { applyIdempotency } from './idempotency.js';
import { procedureMeta } from './procedure-meta.js';
import { clientOf } from './rate-limit.js';
import type { RequestPath } from './request-path.js';
import { restErrorBody, sendError, sendJson } from './respond.js';

interface RestRequest extends IncomingMessage {
  body?: unknown;
  requestId: string;
  partner?: AuthenticatedPartner;
  collectorCharged?: boolean;
}

const PARTNER_PREFIX = '/v1/partners';

/** `POST /v1/collect` (case and trailing slashes ignored: the route of http/request-path.ts). */
const COLLECT_ROUTE = '/v1/collect';

/**
 * A request that may be repeated without harm: a read, or a write carrying an Idempotency-Key
 * (decides 503 vs DATABASE_ERROR when the database stops answering mid-statement; errors.ts).
 */
function isRetrySafe(req: IncomingMessage): boolean {
  return req.method === 'GET' || req.method === 'HEAD' || req.headers['idempotency-key'] !== undefined;
}

/**
 * The spec's REST paths, served by trpc-to-openapi from the same procedures as /trpc. Around it:
 * the partner is authenticated before anything else, the body is read here (1 MB, any JSON
 * content type, malformed JSON -> 400), and every error body is written as `{ message, code }`
 * from the one error table.
 */
export function createRestHandler(deps: AppDeps) {
  const failures = new WeakMap<IncomingMessage, AppError>();

  const openApiHandler = createOpenApiNodeHttpHandler({
    router: appRouter,
    createContext: ({ req, res }): Context => {
      const restReq = req as RestRequest;
      return {
        ...deps,
        requestId: restReq.requestId,
        authorization: req.headers.authorization,
        partner: restReq.partner ?? null,
        client: clientOf(req, res as ServerResponse),
        collectorCharged: restReq.collectorCharged === true,
      };
    },
    responseMeta: ({ errors, paths }) => {
      const [error] = errors;
      if (error) return { status: restErrorBody(appErrorOf(error)).status };
      return { status: procedureMeta(paths?.[0])?.successStatus ?? 200 };
    },
    onError: ({ error, req }) => {
      const appError = appErrorOf(error, { retrySafe: isRetrySafe(req) });
      failures.set(req, appError);
      if (isServerFailure(appError)) {
        deps.logger.error({ err: error, requestId: (req as RestRequest).requestId }, 'request failed');
      }
    },
  });

  return async (req: IncomingMessage, res: ServerResponse, path: RequestPath, notFound: () => void) => {
    const restReq = req as RestRequest;
    try {
      const method = req.method ?? 'GET';
      if (path.route.startsWith(PARTNER_PREFIX)) {
        // The rate-limit policy of every transport (http/rate-limit.ts), applied before the body is read.
        restReq.partner = await deps.limits.authenticate(req.headers.authorization, clientOf(req, res));
      } else if (method === 'POST' && path.route === COLLECT_ROUTE) {
        await deps.limits.limitCollector(clientOf(req, res));
        restReq.collectorCharged = true;
      }
      rejectReservedQueryKeys(req.url);
      if (method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE') {
        restReq.body = await readJsonBody(req);
        req.headers['content-type'] = 'application/json';
      }
      if (method === 'POST' && restReq.partner) {
        const outcome = await applyIdempotency(deps, req, res, restReq.partner.id, path.route, restReq.body);
        if (outcome === 'answered') return;
      }
    } catch (error) {
      const appError = toAppError(error, { retrySafe: isRetrySafe(req) });
      if (isServerFailure(appError)) {
        deps.logger.error({ err: error, requestId: restReq.requestId }, 'request failed');
      }
      sendError(res, appError);
      return;
    }

    // trpc-to-openapi writes its own error body; replace it with ours, from the error it reported.
    const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    res.end = ((chunk?: unknown) => {
      const failure = failures.get(req);
      if (failure && !res.headersSent) {
        const { status, body } = restErrorBody(failure);
        const payload = JSON.stringify(body);
        res.statusCode = status;
        res.setHeader('content-length', Buffer.byteLength(payload));
        for (const [name, value] of Object.entries(failure.headers ?? {})) res.setHeader(name, value);
        return end(payload);
      }
      return end(chunk);
    }) as typeof res.end;

    await openApiHandler(req, res, notFound);
  };
}

export { sendJson };
