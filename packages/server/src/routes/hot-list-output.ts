import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

// perf-budget: hot-list-trusted-output (docs/performance-budget.md)
/** Defined `true` by the production build (tsup.config.ts); undefined when running from sources. */
declare const __TRUST_HOT_LIST_OUTPUTS__: boolean | undefined;

const trusted = typeof __TRUST_HOT_LIST_OUTPUTS__ !== 'undefined' && __TRUST_HOT_LIST_OUTPUTS__;

/**
 * The response schema of a hot list (`merchant.list`, `events.list`) as `.output()` takes it. The
 * schema is the one the OpenAPI document shows, unchanged; what differs is whether tRPC parses the
 * answer with it:
 * - from sources (tests, `pnpm dev`) every answer is parsed AND must come out of the parse
 *   unchanged: an answer the schema would strip, default or transform fails there, loudly;
 * - the compiled server (`node dist/main.js`) returns the service's answer as it is: parsing a
 *   page is a measurable share of the API's CPU (docs/performance-budget.md), and the checks above
 *   show it changes nothing.
 * Only the hot lists: every other procedure's answer is parsed everywhere.
 */
export function hotListOutput<T extends z.ZodType>(schema: T): T {
  const check = (value: unknown): unknown => {
    const parsed = schema.parse(value);
    if (!isDeepStrictEqual(parsed, value)) {
      throw new Error('hot list answer changed by its output schema: the service must return the exact shape');
    }
    return value;
  };
  const pass = trusted ? (value: unknown) => value : check;
  // A view of the schema (its zod internals through the prototype) with tRPC's parse entry points replaced.
  const view = Object.create(schema, {
    parse: { value: pass },
    parseAsync: { value: async (value: unknown) => pass(value) },
  }) as T;
  // zod keeps ids and descriptions in a registry keyed by the schema object: the view carries the same.
  const meta = z.globalRegistry.get(schema);
  if (meta) z.globalRegistry.add(view, meta);
  return view;
}
