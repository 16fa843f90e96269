import { AppError } from '../../kernel/errors.js';

/** The longest request target the listener reads. */
export const MAX_URL_LENGTH = 8 * 1024;
export const MAX_HEADER_BYTES = 16 * 1024;

/** A request's path, worked out once in the listener and passed down. */
export interface RequestPath {
  /** The URL path as sent (percent-encoding and dot segments resolved by the URL parser). */
  pathname: string;
  /** `pathname` lower-cased without trailing slashes: what REST routes and limits compare. */
  route: string;
}

/** `path` without its trailing slashes, in one backward scan (linear in their number). */
export function trimTrailingSlashes(path: string, meter?: { steps: number }): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) {
    end--;
    if (meter) meter.steps++;
  }
  return end === path.length ? path : path.slice(0, end);
}

/**
 * The path of a request target, or an AppError: 414 over MAX_URL_LENGTH, 400 when it is not a URL. The target is
 * appended to a base, so `//x` stays a path instead of being read as a host, as `new URL(target, base)` would.
 */
export function parseRequestPath(target: string | undefined): RequestPath {
  const url = target ?? '/';
  if (url.length > MAX_URL_LENGTH) {
    throw new AppError('URI_TOO_LONG', `Request URL too long (limit ${MAX_URL_LENGTH} characters)`);
  }
  const pathname = plainPathOf(url) ?? parsedPathOf(url);
  return { pathname, route: trimTrailingSlashes(pathname.toLowerCase()) };
}

/** A path the URL parser leaves as it is: unreserved characters and slashes only. */
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~/]*$/;
/** A `.` or `..` segment, which the URL parser resolves. */
const DOT_SEGMENT = /\/\.{1,2}(?:\/|$)/;

/** The pathname of a target whose path needs no parsing (what every client of ours sends), else null. */
export function plainPathOf(target: string): string | null {
  let end = target.indexOf('?');
  if (end < 0) end = target.length;
  const path = end === target.length ? target : target.slice(0, end);
  return PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path) ? path : null;
}

/** The pathname as the WHATWG URL parser reads the target (appended to a base, never resolved against it). */
export function parsedPathOf(target: string): string {
  try {
    return new URL(target.startsWith('/') ? `http://localhost${target}` : target).pathname;
  } catch {
    throw new AppError('VALIDATION_ERROR', 'Malformed request URL');
  }
}
