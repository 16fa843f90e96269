import type { IncomingMessage, ServerResponse } from 'node:http';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { type AppDeps, type Context, requestContext } from '../../context.js';
import type { AuthenticatedPartner } from '../../features/partners/authenticate.js';
import { sessionScopeError } from '../../features/partners/session-scope.js';
import { type AppError, isServerFailure, toAppError } from '../../kernel/errors.js';
import { appRouter } from '../../routes/_app.js';
import { procedureMeta } from '../../routes/procedure-meta.js';
import { appErrorOf } from '../../routes/procedures.js';
import type { IdempotencyClaim } from '../../runtime/idempotency-store.js';
import type { RateLimitClient } from '../../runtime/rate-limits.js';
import { bodyBytesRead, readJsonBody } from '../http/body.js';
import { rejectReservedQueryKeys } from '../http/guards.js';
import { applyIdempotency } from '../http/idempotency-header.js';
import { clientOf, visitorOf } from '../http/request-client.js';
import type { RequestPath } from '../http/request-path.js';
import { restErrorBody, sendError } from '../http/respond.js';
import { answerSessionPreflight, applyFailedSessionCors, applySessionCors } from '../http/session-cors.js';
import { csvAsked, statsCsv } from './stats-csv.js';

interface RestRequest extends IncomingMessage {
  body?: unknown;
  requestId: string;
  partner?: AuthenticatedPartner;
  collectorCharged?: boolean;
  /** The caller as the rate-limit policy sees it: made once per request. */
  client?: RateLimitClient;
}

const PARTNER_PREFIX = '/v1/partners';

/** `POST /v1/collect` (case and trailing slashes ignored: the route of transport/http/request-path.ts). */
const COLLECT_ROUTE = '/v1/collect';

/** A request that may be repeated without harm: a read, or a write carrying an Idempotency-Key. */
function isRetrySafe(req: IncomingMessage): boolean {
  return req.method === 'GET' || req.method === 'HEAD' || req.headers['idempotency-key'] !== undefined;
}

/** The spec's REST paths, served by trpc-to-openapi from the same procedures as /trpc. */
export function createRestHandler(deps: AppDeps) {
  const failures = new WeakMap<IncomingMessage, AppError>();

  const openApiHandler = createOpenApiNodeHttpHandler({
    router: appRouter,
    createContext: ({ req, res }): Context => {
      const restReq = req as RestRequest;
      return requestContext(deps, {
        requestId: restReq.requestId,
        authorization: req.headers.authorization,
        partner: restReq.partner ?? null,
        client: restReq.client ?? clientOf(req, res as ServerResponse),
        collectorCharged: restReq.collectorCharged === true,
        visitor: visitorOf(req),
      });
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
    let claim: IdempotencyClaim | null = null;
    try {
      const method = req.method ?? 'GET';
      if (method === 'OPTIONS' && answerSessionPreflight(req, res, path.route)) return;
      if (path.route.startsWith(PARTNER_PREFIX)) {
        restReq.client = clientOf(req, res);
        restReq.partner = await deps.limits.authenticate(req.headers.authorization, restReq.client);
        const { session } = restReq.partner;
        if (session) {
          applySessionCors(req, res, session);
          // Sessions only read: anything else is refused before its body is read.
          if (method !== 'GET') throw sessionScopeError();
        }
      } else if (method === 'POST' && path.route === COLLECT_ROUTE) {
        restReq.client = clientOf(req, res);
        await deps.limits.limitCollector(restReq.client);
        restReq.collectorCharged = true;
      }
      rejectReservedQueryKeys(req.url);
      if (method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE') {
        restReq.body = await readJsonBody(req);
        req.headers['content-type'] = 'application/json';
        if (restReq.collectorCharged && restReq.client)
          await deps.limits.chargeReadBytes(restReq.client, bodyBytesRead(req));
      }
      if (method === 'POST' && restReq.partner) {
        const outcome = await applyIdempotency(deps, req, restReq.partner.id, path.route, restReq.body);
        if (outcome && 'replay' in outcome) {
          const { status, body } = outcome.replay;
          const headers = { 'content-type': 'application/json; charset=utf-8', 'idempotent-replayed': 'true' };
          write(res, res.end.bind(res), { status, headers, body, ours: true });
          return;
        }
        claim = outcome?.claim ?? null;
      }
    } catch (error) {
      if (!restReq.partner) applyFailedSessionCors(req, res);
      const appError = toAppError(error, { retrySafe: isRetrySafe(req) });
      if (isServerFailure(appError)) {
        deps.logger.error({ err: error, requestId: restReq.requestId }, 'request failed');
      }
      sendError(res, appError);
      return;
    }

    // trpc-to-openapi ends the response; that end is taken here, once, to write our error body.
    const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    const csv = csvAsked(req, path.route);
    let finished = false;
    res.end = ((chunk?: unknown) => {
      if (finished) return end(chunk);
      finished = true;
      const failure = failures.get(req);
      const response: FinalResponse =
        failure && !res.headersSent
          ? errorAnswer(failure)
          : csv && res.statusCode === 200
            ? csvAnswer(csv, chunk)
            : { status: res.statusCode, headers: {}, body: chunk, ours: false };
      if (claim) void claim.finish(response.status, textOf(response.body)).then(() => write(res, end, response));
      else write(res, end, response);
      return res;
    }) as typeof res.end;

    await openApiHandler(req, res, notFound);
  };
}

/** A REST response ready to leave: what trpc-to-openapi produced, or our error answer in its place. */
interface FinalResponse {
  status: number;
  headers: Record<string, string>;
  /** Our error answer's text, or the adapter's chunk as it gave it. */
  body: unknown;
  /** Written here (an error answer, a replay): content-length is set from the body. */
  ours: boolean;
}

/** A statistics answer as CSV (asked by `format=csv` or `Accept: text/csv`), a download. */
function csvAnswer(kind: Parameters<typeof statsCsv>[0], chunk: unknown): FinalResponse {
  return {
    status: 200,
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${kind}.csv"`,
    },
    body: statsCsv(kind, JSON.parse(textOf(chunk))),
    ours: true,
  };
}

function errorAnswer(failure: AppError): FinalResponse {
  const { status, body } = restErrorBody(failure);
  return { status, headers: { ...failure.headers }, body: JSON.stringify(body), ours: true };
}

function textOf(body: unknown): string {
  return typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : '';
}

/** Writes a final response through the adapter's real `end`: status, headers (ours: content-length too). */
function write(res: ServerResponse, end: (chunk?: unknown) => ServerResponse, response: FinalResponse): void {
  if (!res.headersSent) {
    res.statusCode = response.status;
    for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
    if (response.ours) res.setHeader('content-length', Buffer.byteLength(textOf(response.body)));
  }
  end(response.body);
}
