import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../../context.js';
import { AppError, toAppError } from '../../kernel/errors.js';
import { isApiPath, type RouteDeclaration } from '../../routes/declare-route.js';
import { allProcedureMeta } from '../../routes/procedure-meta.js';
import { METRICS_PATH, ROUTES } from '../../routes/route-table.js';
import { TRPC_PREFIX } from '../trpc/trpc-handler.js';
import { rateLimitScopeOf } from './rate-limit-scope.js';
import { clientOf } from './request-client.js';
import { sendError } from './respond.js';

export { METRICS_PATH };

interface RoutePattern {
  template: string;
  pattern: RegExp;
}

/**
 * Route templates for metric labels: every procedure's REST path and every route of routes/route-table.ts. A path that
 * matches none is `unmatched`: label values stay a small fixed set whatever clients send.
 */
export function createRouteTemplates(): (route: string, collector: boolean) => string {
  const patterns: RoutePattern[] = [];
  const templates = new Set<string>();
  for (const { meta } of allProcedureMeta()) if (meta.openapi) templates.add(meta.openapi.path);
  const routes: readonly RouteDeclaration[] = ROUTES;
  for (const { path } of routes.filter(({ path }) => isApiPath(path))) templates.add(path);
  for (const template of templates) {
    const source = template
      .toLowerCase()
      .split(/\{[^}]+\}/)
      .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]+');
    patterns.push({ template, pattern: new RegExp(`^${source}$`) });
  }
  const procedures = new Set(allProcedureMeta().map(({ path }) => path));
  const fixed = routes.filter(({ path }) => !isApiPath(path));
  return (route, collector) => {
    if (collector) {
      if (route === '/e') return 'collector /e';
      if (/^\/t\/[^/]+\.js$/.test(route)) return 'collector /t/{tagId}.js';
      return 'collector unmatched';
    }
    for (const { path, prefix } of fixed) if (route === path || (prefix && route.startsWith(`${path}/`))) return path;
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
      rateLimitScopeOf(res) ?? (isTagQuota(res) ? 'tag' : collector || route === '/v1/collect' ? 'address' : 'key');
    deps.metrics.rateLimitRejections.inc({ scope });
  }
}

/** Compares digests, not the tokens. */
function sameToken(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The main port's check of `Authorization: Bearer <METRICS_TOKEN>`: false without METRICS_TOKEN. */
export async function checkMetricsToken(deps: AppDeps, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const token = deps.env.METRICS_TOKEN;
  if (token === undefined) return false;
  const header = req.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice(7) : '';
  if (sameToken(given, token)) return true;
  await deps.limits.countAuthFailure(clientOf(req, res));
  throw new AppError('UNAUTHORIZED', 'A valid metrics token is required', {
    headers: { 'www-authenticate': 'Bearer' },
  });
}

/** The Prometheus text exposition (no body for HEAD). */
export async function sendMetrics(deps: AppDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { contentType, body } = await deps.metrics.render();
  res.writeHead(200, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** GET /metrics: on METRICS_PORT it is open; on the main port it is the `metrics` route. */
export async function handleMetrics(
  deps: AppDeps,
  req: IncomingMessage,
  res: ServerResponse,
  options: { open: boolean },
): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (!options.open) {
    try {
      if (!(await checkMetricsToken(deps, req, res))) return false;
    } catch (error) {
      sendError(res, toAppError(error));
      return true;
    }
  }
  await sendMetrics(deps, req, res);
  return true;
}
