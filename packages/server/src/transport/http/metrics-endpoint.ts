import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../../context.js';
import { AppError, toAppError } from '../../kernel/errors.js';
import type { RateLimitScope } from '../../kernel/metrics.js';
import { buildOpenApiDocument } from '../../openapi/document.js';
import { clientOf } from '../../runtime/rate-limits.js';
import { allProcedureMeta } from '../rest/procedure-meta.js';
import { TRPC_PREFIX } from '../trpc/trpc-handler.js';
import { sendError } from './respond.js';

export const METRICS_PATH = '/metrics';

/** The scope of a 429 this response carries, when it is not the per-key or per-address limit. */
const rateLimitScopes = new WeakMap<ServerResponse, RateLimitScope>();
export function markRateLimitScope(res: ServerResponse, scope: RateLimitScope): void {
  rateLimitScopes.set(res, scope);
}

interface RoutePattern {
  template: string;
  pattern: RegExp;
}

/**
 * Route templates for metric labels: every path of the OpenAPI document (`/v1/partners/tag/{tagId}`)
 * plus the fixed paths served beside it. A path that matches none is `unmatched`: label values
 * stay a small fixed set whatever clients send (never a raw path).
 */
export function createRouteTemplates(): (route: string, collector: boolean) => string {
  const patterns: RoutePattern[] = [];
  const doc = buildOpenApiDocument() as { paths?: Record<string, unknown> };
  for (const template of Object.keys(doc.paths ?? {})) {
    const source = template
      .toLowerCase()
      .split(/\{[^}]+\}/)
      .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]+');
    patterns.push({ template, pattern: new RegExp(`^${source}$`) });
  }
  const procedures = new Set(allProcedureMeta().map(({ path }) => path));
  const fixed = new Set(['/healthz', '/readyz', '/openapi.json', METRICS_PATH]);
  return (route, collector) => {
    if (collector) {
      if (route === '/e') return 'collector /e';
      if (/^\/t\/[^/]+\.js$/.test(route)) return 'collector /t/{tagId}.js';
      return 'collector unmatched';
    }
    if (fixed.has(route)) return route;
    if (route === '/docs' || route.startsWith('/docs/')) return '/docs';
    if (route === TRPC_PREFIX || route.startsWith(`${TRPC_PREFIX}/`)) {
      const name = route.slice(TRPC_PREFIX.length + 1);
      return procedures.has(name) ? `${TRPC_PREFIX}/${name}` : `${TRPC_PREFIX}/{batch or unknown}`;
    }
    for (const { template, pattern } of patterns) if (pattern.test(route)) return template;
    return 'unmatched';
  };
}

/** True for a refusal by a tag's volume quota: its `RateLimit-Policy` names it (runtime/rate-limits.ts). */
function isTagQuota(res: ServerResponse): boolean {
  const policy = res.getHeader('ratelimit-policy');
  return typeof policy === 'string' && policy.startsWith('"tag-');
}

/** Counts one answered request (call on `finish` or `close`). */
export function observeRequest(
  deps: AppDeps,
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  collector: boolean,
  seconds: number,
): void {
  const status = String(res.statusCode);
  const labels = { route, method: req.method ?? 'GET', status };
  deps.metrics.http.requests.inc(labels);
  deps.metrics.http.duration.observe(labels, seconds);
  if (res.statusCode === 429) {
    const scope =
      rateLimitScopes.get(res) ?? (isTagQuota(res) ? 'tag' : collector || route === '/v1/collect' ? 'address' : 'key');
    deps.metrics.rateLimitRejections.inc({ scope });
  }
}

/**
 * Compares digests, not the tokens: both are 32 bytes whatever was sent, so neither the time nor
 * an early length check tells a caller how long the token is.
 */
function sameToken(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * GET /metrics: the Prometheus text exposition. On METRICS_PORT it is open (bind that port to a
 * private interface); on the main port only with `Authorization: Bearer <METRICS_TOKEN>`, and
 * without METRICS_TOKEN not at all (404, as any unknown path).
 * Returns false when the request is not one for the metrics (the caller answers 404).
 */
export async function handleMetrics(
  deps: AppDeps,
  req: IncomingMessage,
  res: ServerResponse,
  options: { open: boolean },
): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (!options.open) {
    const token = deps.env.METRICS_TOKEN;
    if (token === undefined) return false;
    const header = req.headers.authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!sameToken(given, token)) {
      // Counted with failed API keys (one budget per address): past it, 429 instead of 401.
      try {
        await deps.limits.countAuthFailure(clientOf(req, res));
      } catch (error) {
        sendError(res, toAppError(error));
        return true;
      }
      sendError(
        res,
        new AppError('UNAUTHORIZED', 'A valid metrics token is required', {
          headers: { 'www-authenticate': 'Bearer' },
        }),
      );
      return true;
    }
  }
  const { contentType, body } = await deps.metrics.render();
  res.writeHead(200, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}
