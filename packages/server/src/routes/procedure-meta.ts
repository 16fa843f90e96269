import type { AnyTRPCProcedure } from '@trpc/server';
import { appRouter } from './_app.js';
import type { Meta } from './procedures.js';

const procedures = appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure>;

/** The meta of a procedure by its dotted path (`merchant.create`). */
export function procedureMeta(path: string | undefined): Meta | undefined {
  return path ? (procedures[path]?._def.meta as Meta | undefined) : undefined;
}

/** Every procedure with its meta, for the OpenAPI post-processing. */
export function allProcedureMeta(): Array<{ path: string; meta: Meta }> {
  return Object.entries(procedures).map(([path, procedure]) => ({ path, meta: (procedure._def.meta ?? {}) as Meta }));
}
