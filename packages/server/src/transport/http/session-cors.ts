import type { IncomingMessage, ServerResponse } from 'node:http';
import { SESSION_TOKEN_PREFIX } from '@partner/shared-schemas';
import { bearerToken } from '../../kernel/bearer-tokens.js';
import { allProcedureMeta } from '../../routes/procedure-meta.js';
import type { SessionPrincipal } from '../../runtime/keys/principal.js';

/**
 * CORS for merchant session tokens only (docs/decisions/merchant-sessions.md). A partner key never gets a CORS header:
 * keys belong on servers.
 */
const SESSION_CORS_MAX_AGE_SECONDS = 600;
const SESSION_CORS_METHODS = 'GET';
/** What the SDK sends: the token, JSON, its own identification, and a caller's request id. */
const SESSION_CORS_HEADERS = 'Authorization, Content-Type, Idempotency-Key, X-Partner-Sdk, X-Request-Id';
/** Response headers a page may read besides the safelisted ones. */
const EXPOSED_HEADERS = 'x-request-id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After';

const escapeRegExp = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

let readable: { patterns: RegExp[]; literals: Set<string> } | undefined;

function sessionReadable(): { patterns: RegExp[]; literals: Set<string> } {
  const all = allProcedureMeta().flatMap(({ meta }) =>
    meta.openapi ? [{ meta, path: meta.openapi.path.toLowerCase() }] : [],
  );
  return {
    patterns: all
      .filter(({ meta }) => meta.sessionAccess !== undefined)
      .map(({ path }) => new RegExp(`^${escapeRegExp(path).replace(/\{[^/}]+\}/g, '[^/]+')}$`)),
    // A literal path (`/v1/partners/tag/generate`) is its own operation even where a template fits it.
    literals: new Set(
      all.filter(({ meta, path }) => !path.includes('{') && !meta.sessionAccess).map(({ path }) => path),
    ),
  };
}

/** True for the REST path (`route`: lower-cased, no trailing slash) of a procedure sessions may call. */
function isSessionReadablePath(route: string): boolean {
  readable ??= sessionReadable();
  return !readable.literals.has(route) && readable.patterns.some((pattern) => pattern.test(route));
}

function originOf(req: IncomingMessage): string | undefined {
  const origin = req.headers.origin;
  return typeof origin === 'string' && origin !== '' ? origin : undefined;
}

function allow(res: ServerResponse, origin: string): void {
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
}

/** The answer may differ by Origin: caches must keep them apart. */
function varyOnOrigin(res: ServerResponse): void {
  const vary = res.getHeader('vary');
  if (vary === undefined) res.setHeader('vary', 'Origin');
  else if (!/\borigin\b/i.test(String(vary))) res.setHeader('vary', `${String(vary)}, Origin`);
}

/** A request authenticated with a session: CORS headers when it comes from one of its origins. */
export function applySessionCors(req: IncomingMessage, res: ServerResponse, session: SessionPrincipal): void {
  const origin = originOf(req);
  if (origin === undefined) return;
  varyOnOrigin(res);
  if (session.allowedOrigins.includes(origin)) allow(res, origin);
}

/** A session token that did not authenticate: its origins are unknown, so the answer is readable from any origin. */
export function applyFailedSessionCors(req: IncomingMessage, res: ServerResponse): void {
  const origin = originOf(req);
  if (origin === undefined) return;
  const token = bearerToken(req.headers.authorization);
  if (token === null || !token.startsWith(SESSION_TOKEN_PREFIX)) return;
  varyOnOrigin(res);
  allow(res, origin);
}

/** Answers the preflight of a session-readable path. */
export function answerSessionPreflight(req: IncomingMessage, res: ServerResponse, route: string): boolean {
  const origin = originOf(req);
  if (req.method !== 'OPTIONS' || origin === undefined || !isSessionReadablePath(route)) return false;
  varyOnOrigin(res);
  res.statusCode = 204;
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-allow-methods', SESSION_CORS_METHODS);
  res.setHeader('access-control-allow-headers', SESSION_CORS_HEADERS);
  res.setHeader('access-control-max-age', String(SESSION_CORS_MAX_AGE_SECONDS));
  res.end();
  return true;
}
