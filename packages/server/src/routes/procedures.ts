import { WELL_FORMED_MESSAGE } from '@partner/shared-schemas';
import { initTRPC, TRPCError } from '@trpc/server';
import { type TRPC_ERROR_CODE_KEY, TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Context } from '../context.js';
import type { AuthenticatedPartner } from '../features/partners/authenticate.js';
import { sessionScopeError } from '../features/partners/session-scope.js';
import {
  AppError,
  causes,
  type ErrorReason,
  errorResponse,
  statusOf,
  type ToAppErrorOptions,
  toAppError,
} from '../kernel/errors.js';
import { jsonInputProblem, TOO_DEEP_MESSAGE } from '../kernel/request-limits.js';
import type { RateLimitClient } from '../runtime/rate-limits.js';

export interface Meta extends OpenApiMeta {
  /** HTTP status of a successful REST answer (default 200). */
  successStatus?: 200 | 201 | 202 | 204;
  /** The failures this procedure can answer, for the OpenAPI document. */
  errors?: ErrorReason[];
  /** The description of the success response in the OpenAPI document (default "Successful response"). */
  successDescription?: string;
  /** The success response carries `Link: <...>; rel="next"` when another page follows (declared in the document). */
  nextLink?: boolean;
  /** A merchant session token may call this procedure, for its own merchant only. */
  sessionAccess?: 'merchant';
  /** Also answers `text/csv` (`format=csv` or `Accept: text/csv`; transport/rest/stats-csv.ts). */
  csv?: true;
}

/** The one map from the error table to tRPC: a tRPC code per HTTP status. */
const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  408: 'TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'BAD_REQUEST',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  431: 'BAD_REQUEST',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/** The tRPC code of an AppError (by its status in the error table). */
export function trpcCodeOf(error: AppError): TRPC_ERROR_CODE_KEY {
  return TRPC_CODE_BY_STATUS[statusOf(error)] ?? 'INTERNAL_SERVER_ERROR';
}

/** An AppError as tRPC's error (its cause), with the tRPC code of its status. */
export function toTrpcError(error: AppError): TRPCError {
  return new TRPCError({ code: trpcCodeOf(error), message: error.message, cause: error });
}

/** Anything thrown, as tRPC's error: an AppError (or one in its cause chain) with the table's code. */
export function trpcErrorOf(error: unknown): unknown {
  if (error instanceof TRPCError && error.code !== 'INTERNAL_SERVER_ERROR') return error;
  const carried = carriedAppError(error);
  return carried ? toTrpcError(carried) : error;
}

/** `toAppError` for what tRPC and trpc-to-openapi report: their own failures get their reason here. */
export function appErrorOf(error: unknown, options: ToAppErrorOptions = {}): AppError {
  const appError = toAppError(error, options);
  if (appError.reason !== 'INTERNAL' || !(error instanceof TRPCError)) return appError;
  switch (error.code) {
    case 'PARSE_ERROR':
    case 'BAD_REQUEST':
      return new AppError('VALIDATION_ERROR', 'Invalid request: the input could not be read', { cause: error });
    case 'UNSUPPORTED_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json', { cause: error });
    case 'PAYLOAD_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large (limit 1 MB)', { cause: error });
    case 'NOT_FOUND':
    case 'METHOD_NOT_SUPPORTED':
      return new AppError('NOT_FOUND', 'Not found', { cause: error });
    default:
      return appError;
  }
}

/** The AppError a tRPC error carries (thrown by a service or middleware), if any. */
function carriedAppError(error: unknown): AppError | undefined {
  return causes(error).find((e): e is AppError => e instanceof AppError);
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
      const appError = appErrorOf(error, { retrySafe: type === 'query' || type === 'subscription' });
      const { status, body } = errorResponse(appError);
      // The retry hint of a 429/503 (a cap, a shutdown, an outage): REST has it as Retry-After.
      const retryAfter = Object.entries(appError.headers ?? {}).find(([name]) => name.toLowerCase() === 'retry-after');
      // tRPC wraps a thrown AppError as INTERNAL_SERVER_ERROR; its own code is the table's (by status).
      const carried = carriedAppError(error);
      return {
        code:
          carried && error.code === 'INTERNAL_SERVER_ERROR' ? TRPC_ERROR_CODES_BY_KEY[trpcCodeOf(carried)] : shape.code,
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

/**
 * What every procedure's one middleware does with a failure. Not a middleware of its own: that would add a tRPC level
 * to every call for a mapping two lines do here.
 */
function mapFailure<R extends { ok: true } | { ok: false; error: TRPCError }>(result: R): R {
  if (result.ok || result.error.code !== 'INTERNAL_SERVER_ERROR') return result;
  const mapped = trpcErrorOf(result.error);
  return mapped instanceof TRPCError ? ({ ...result, error: mapped } as R) : result;
}

export const createCallerFactory = t.createCallerFactory;

/** Input nested absurdly deep is a 400 on /trpc as on REST (where transport/http/body.ts checks it). */
async function checkRawInput(getRawInput: () => Promise<unknown>): Promise<void> {
  // One walk (kept from the REST body reader's when it read this body): too deep, then every text
  // input of every procedure, whatever the transport: no lone surrogates (PostgreSQL refuses them).
  const problem = jsonInputProblem(await getRawInput());
  if (problem === 'too-deep') throw new AppError('VALIDATION_ERROR', TOO_DEEP_MESSAGE);
  if (problem === 'malformed-text') throw new AppError('VALIDATION_ERROR', `Invalid request: ${WELL_FORMED_MESSAGE}`);
}

/** In-process callers (createCaller) share one budget; HTTP transports pass the real client. */
const IN_PROCESS: RateLimitClient = { ip: 'in-process', setHeader: () => {}, unchargedBytes: 0 };

/** The public collector procedure. */
export const collectorProcedure = t.procedure.use(async ({ ctx, getRawInput, next }) => {
  try {
    if (!ctx.collectorCharged) await ctx.limits.limitCollector(ctx.client ?? IN_PROCESS);
    await checkRawInput(getRawInput);
  } catch (error) {
    throw trpcErrorOf(error);
  }
  return mapFailure(await next());
});

/** Every partner procedure: authenticated, then one point of the key's budget, per call. */
export const partnerProcedure = t.procedure.use(async ({ ctx, meta, getRawInput, next }) => {
  let partner: AuthenticatedPartner;
  try {
    partner = ctx.partner ?? (await ctx.limits.authenticate(ctx.authorization, ctx.client ?? IN_PROCESS));
    if (partner.session && meta?.sessionAccess !== 'merchant') throw sessionScopeError();
    await checkRawInput(getRawInput);
  } catch (error) {
    throw trpcErrorOf(error);
  }
  // tRPC merges this into the context (one copy per call; spreading ctx here made a second).
  return mapFailure(await next({ ctx: { partner } }));
});
