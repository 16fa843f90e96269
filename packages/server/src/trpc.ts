import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { authenticate } from './auth/authenticate.js';
import type { Context } from './context.js';
import { type ErrorReason, errorResponse, toAppError } from './errors.js';

export interface Meta extends OpenApiMeta {
  /** HTTP status of a successful REST answer (default 200). */
  successStatus?: 200 | 201 | 202;
  /** The failures this procedure can answer, for the OpenAPI document. */
  errors?: ErrorReason[];
}

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    // The one place a thrown error becomes a public error: the code table decides status and code;
    // no stack and no internal message ever leave.
    errorFormatter({ shape, error, ctx }) {
      const appError = toAppError(error);
      const { status, body } = errorResponse(appError);
      return {
        code: shape.code,
        message: body.message,
        data: {
          code: body.code,
          httpStatus: status,
          path: shape.data.path,
          requestId: ctx?.requestId,
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure;

/** Every partner procedure: authenticated before its input is parsed. */
export const partnerProcedure = t.procedure.use(async ({ ctx, next }) => {
  const partner = ctx.partner ?? (await authenticate(ctx.db, ctx.authorization));
  return next({ ctx: { ...ctx, partner } });
});
