import { PartnerError } from '../core/errors.js';

/** A query parameter value before encoding. */
export type QueryValue = string | number | boolean | Date | readonly string[] | null | undefined;

/**
 * Encodes query parameters the way the API expects: `undefined`/`null` (and empty arrays) are
 * omitted, arrays are joined with commas, dates become `toISOString()`, numbers become strings.
 */
export function buildQuery(params: Record<string, QueryValue>): URLSearchParams {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    if (value instanceof Date) {
      if (Number.isNaN(value.getTime())) throw new PartnerError(`Invalid Date given for the \`${key}\` parameter`);
      search.set(key, value.toISOString());
    } else if (Array.isArray(value)) {
      const joined = (value as readonly string[])
        .map((item) => item.trim())
        .filter((item) => item.length > 0)
        .join(',');
      if (joined) search.set(key, joined);
    } else {
      search.set(key, String(value));
    }
  }
  return search;
}
