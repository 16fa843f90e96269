// `@partner/trpc`: the type of the Partner Tags tRPC router, for `createTRPCClient<AppRouter>`.
//
// The server's router type carries its context (database handles, logger, caches...) and its
// OpenAPI metadata, neither of which a client uses, and both of which would drag the server's
// dependencies into a partner's type check. So this entry rebuilds the router type from what a
// client needs: every procedure's kind, input and output, the error shape and the transformer.
// The declaration build (scripts/build.mjs) prints it fully expanded into one self-contained
// `dist/index.d.ts` that imports nothing but `@trpc/server`; the JavaScript entry is empty.
//
// The router type is taken from the server's `@partner/server/router` export entry only.
import type { AppRouter as ServerRouter } from '@partner/server/router';
import type {
  AnyTRPCProcedure,
  AnyTRPCRouter,
  TRPCBuiltRouter,
  TRPCMutationProcedure,
  TRPCQueryProcedure,
  TRPCSubscriptionProcedure,
} from '@trpc/server';

/** A procedure as a client sees it: kind, input, output (no server metadata). A nested record: recursed. */
type PublicEntry<P> = P extends AnyTRPCProcedure
  ? P['_def']['type'] extends 'query'
    ? TRPCQueryProcedure<{ input: P['_def']['$types']['input']; output: P['_def']['$types']['output']; meta: object }>
    : P['_def']['type'] extends 'mutation'
      ? TRPCMutationProcedure<{
          input: P['_def']['$types']['input'];
          output: P['_def']['$types']['output'];
          meta: object;
        }>
      : TRPCSubscriptionProcedure<{
          input: P['_def']['$types']['input'];
          output: P['_def']['$types']['output'];
          meta: object;
        }>
  : PublicRecord<P>;

type PublicRecord<Rec> = Rec extends object ? { [K in keyof Rec]: PublicEntry<Rec[K]> } : never;

/**
 * The client's view of a router: an empty context and metadata, the router's own error shape and
 * transformer. Declared (never called) so that the declaration emit prints the result expanded.
 */
declare function publicRouter<R extends AnyTRPCRouter>(
  router: R,
): R['_def']['_config']['$types'] extends infer Root extends { errorShape: unknown; transformer: unknown }
  ? TRPCBuiltRouter<
      {
        ctx: object;
        meta: object;
        errorShape: { [K in keyof Root['errorShape']]: Root['errorShape'][K] };
        transformer: Root['transformer'];
      },
      PublicRecord<R['_def']['record']>
    >
  : never;

declare const appRouter: ServerRouter;
const publicAppRouter = publicRouter(appRouter);

/**
 * The Partner Tags tRPC router, for `createTRPCClient<AppRouter>(...)` from `@trpc/client`:
 * every procedure (`merchant.list`, `tag.generate`, `events.list`, `events.stream`, ...) with its
 * input and output, and the error shape (`error.data.code`, `error.data.httpStatus`, ...).
 */
export type AppRouter = typeof publicAppRouter;
