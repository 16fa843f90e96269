// Limits on what a request may carry, shared by every transport and the tRPC procedures.

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The deepest nesting of arrays and objects a request may carry. No real payload comes near it; a far deeper one
 * overflows the stack of the JSON.stringify calls further down and would answer 500 instead of 400.
 */
const MAX_JSON_DEPTH = 64;

/** What is wrong with a request's JSON: nested too deep, or a string or key that is not well-formed. */
type JsonInputProblem = 'too-deep' | 'malformed-text' | null;

/** Large bodies already inspected (by the REST body reader), so the procedure's guard does not walk them again. */
const inspected = new WeakMap<object, JsonInputProblem>();

/** One walk of a request's JSON for both input guards. Iterative: safe at any depth. */
export function jsonInputProblem(value: unknown, remember = false): JsonInputProblem {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'string' && !isWellFormed(value) ? 'malformed-text' : null;
  }
  const known = inspected.get(value);
  if (known !== undefined) return known;
  const problem = walkJson(value);
  if (remember) inspected.set(value, problem);
  return problem;
}

function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

function walkJson(root: object): JsonInputProblem {
  let malformed = false;
  const values: unknown[] = [root];
  const depths: number[] = [1];
  while (values.length > 0) {
    const current = values.pop();
    const depth = depths.pop() as number;
    if (typeof current === 'string') {
      if (!malformed && !isWellFormed(current)) malformed = true;
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) return 'too-deep';
    if (Array.isArray(current)) {
      for (const item of current) {
        values.push(item);
        depths.push(depth + 1);
      }
      continue;
    }
    const record = current as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!malformed && !isWellFormed(key)) malformed = true;
      values.push(record[key]);
      depths.push(depth + 1);
    }
  }
  return malformed ? 'malformed-text' : null;
}

export const TOO_DEEP_MESSAGE = `Invalid request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`;
