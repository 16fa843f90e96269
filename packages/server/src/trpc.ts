import { isWellFormedDeep, WELL_FORMED_MESSAGE } from '@partner/shared-schemas';
import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Context } from './context.js';
import { AppError, type ErrorReason, errorResponse, toAppError } from './errors.js';
import { exceedsJsonDepth, TOO_DEEP_MESSAGE } from './http/body.js';
import type { RateLimitClient } from './http/rate-limit.js';

export interface Meta extends OpenApiMeta {
  /** HTTP status of a successful REST answer (default 200). */
  successStatus?: 200 | 201 | 202 | 204;
  /** The failures this procedure can answer, for the OpenAPI document. */
  errors?: ErrorReason[];
  /** The description of the success response in the OpenAPI document (default "Successful response"). */
  successDescription?: string;
  /** The REST body may also be sent as `text/plain` JSON (declared in the document; e.g. for `sendBeacon`). */
  acceptsTextPlain?: boolean;
}

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    // Subscriptions (events.stream) over SSE: a keep-alive ping comment every 15 s, so proxies
    // and clients never see an idle connection (the REST stream pings every STREAM_PING_MS).
    sse: { ping: { enabled: true, intervalMs: 15_000 } },
    // The one place a thrown error becomes a public error: the code table decides status and code;
    // no stack and no internal message ever leave.
    errorFormatter({ shape, error, ctx, type }) {
      // A read may always be retried (an unavailable database is a 503 then); see toAppError.
      const appError = toAppError(error, { retrySafe: type === 'query' || type === 'subscription' });
      const { status, body } = errorResponse(appError);
      // The retry hint of a 429/503 (a cap, a shutdown, an outage): REST has it as Retry-After.
      const retryAfter = Object.entries(appError.headers ?? {}).find(([name]) => name.toLowerCase() === 'retry-after');
      return {
        code: shape.code,
        message: body.message,
        data: {
          code: body.code,
          ...(body.details ? { details: body.details } : {}),
          ...(retryAfter && /^\d+$/.test(retryAfter[1]) ? { retryAfter: Number(retryAfter[1]) } : {}),
          httpStatus: status,
          path: shape.data.path,
          requestId: ctx?.requestId,
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Input nested absurdly deep is a 400 on /trpc as on REST (where http/body.ts checks it). */
const inputDepthGuard = t.middleware(async ({ getRawInput, next }) => {
  const raw = await getRawInput();
  if (exceedsJsonDepth(raw)) throw new AppError('VALIDATION_ERROR', TOO_DEEP_MESSAGE);
  // Every text input of every procedure, whatever the transport: no lone surrogates (PostgreSQL refuses them).
  if (!isWellFormedDeep(raw)) throw new AppError('VALIDATION_ERROR', `Invalid request: ${WELL_FORMED_MESSAGE}`);
  return next();
});

export const publicProcedure = t.procedure.use(inputDepthGuard);

/** In-process callers (createCaller) share one budget; HTTP transports pass the real client. */
const IN_PROCESS: RateLimitClient = { ip: 'in-process', setHeader: () => {} };

/**
 * The public collector procedure: one point of the client address's collector budget per call,
 * whatever the transport (REST `/v1/collect` charges before reading the body and says so;
 * each call of a /trpc batch is charged here), before the input is parsed.
 */
export const collectorProcedure = t.procedure
  .use(async ({ ctx, next }) => {
    if (!ctx.collectorCharged) await ctx.limits.limitCollector(ctx.client ?? IN_PROCESS);
    return next();
  })
  .use(inputDepthGuard);

/**
 * Every partner procedure: authenticated (failed attempts throttled per address), then one point
 * of the key's budget, per call, before its input is parsed (http/rate-limit.ts).
 */
export const partnerProcedure = t.procedure
  .use(async ({ ctx, next }) => {
    const partner = ctx.partner ?? (await ctx.limits.authenticate(ctx.authorization, ctx.client ?? IN_PROCESS));
    return next({ ctx: { ...ctx, partner } });
  })
  .use(inputDepthGuard);
