import { AppError } from '../../kernel/errors.js';

/**
 * trpc-to-openapi 3.3.0 collects query parameters into a plain object (`parsedQs[key].push(...)`). Such names are
 * never parameters of ours: 400 them first.
 */
export function rejectReservedQueryKeys(url: string | undefined): void {
  const queryAt = url?.indexOf('?') ?? -1;
  if (!url || queryAt < 0) return;
  for (const key of queryKeys(url.slice(queryAt + 1))) {
    if (key in Object.prototype) {
      throw new AppError('VALIDATION_ERROR', `Invalid request: unknown query parameter ${JSON.stringify(key)}`);
    }
  }
}

/** The query's parameter names as URLSearchParams decodes them. */
export function queryKeys(query: string): Iterable<string> {
  if (query.includes('%') || query.includes('+')) return new URLSearchParams(query).keys();
  const keys: string[] = [];
  // URLSearchParams drops one leading `?`.
  for (const pair of (query.startsWith('?') ? query.slice(1) : query).split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    keys.push(equals < 0 ? pair : pair.slice(0, equals));
  }
  return keys;
}
