import { AppError } from '../errors.js';

/**
 * trpc-to-openapi 3.3.0 collects query parameters into a plain object (`parsedQs[key].push(...)`):
 * a parameter named after an Object.prototype member (`toString`, `constructor`, `__proto__`...)
 * throws inside it and would answer 500. Such names are never parameters of ours: 400 them first.
 * (Found by the fuzzer, test/system/fuzz.test.ts.)
 */
export function rejectReservedQueryKeys(url: string | undefined): void {
  const queryAt = url?.indexOf('?') ?? -1;
  if (!url || queryAt < 0) return;
  for (const key of new URLSearchParams(url.slice(queryAt + 1)).keys()) {
    if (key in Object.prototype) {
      throw new AppError('VALIDATION_ERROR', `Invalid request: unknown query parameter ${JSON.stringify(key)}`);
    }
  }
}
