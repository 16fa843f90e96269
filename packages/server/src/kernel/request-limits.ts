// Limits on what a request may carry, shared by every transport and the tRPC procedures.

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The deepest nesting of arrays and objects a request may carry. No real payload comes near it;
 * a far deeper one (a 1 MB body holds 500 000 levels) overflows the stack of the JSON.stringify
 * calls further down (tRPC, event storage) and would answer 500 instead of 400.
 */
const MAX_JSON_DEPTH = 64;

/** True when `value` nests arrays or objects deeper than `max` levels. Iterative: safe at any depth. */
export function exceedsJsonDepth(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, depth] = next;
    if (current === null || typeof current !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}

export const TOO_DEEP_MESSAGE = `Invalid request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`;
