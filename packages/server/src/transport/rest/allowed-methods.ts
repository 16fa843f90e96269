import type { ServerResponse } from 'node:http';
import { AppError } from '../../kernel/errors.js';
import { buildOpenApiDocument } from '../../openapi/document.js';
import { DOCS_PATH } from '../http/docs.js';
import { sendError } from '../http/respond.js';

/** Paths served outside the REST operations, with the methods they answer. */
const OTHER_ROUTES: Array<[RegExp, string[], boolean?]> = [
  [/^\/healthz$/, ['GET', 'HEAD']],
  [/^\/readyz$/, ['GET', 'HEAD']],
  [/^\/openapi\.json$/, ['GET']],
  [new RegExp(`^${DOCS_PATH}(/.*)?$`), ['GET', 'HEAD']],
];

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** A path pattern, its methods, and whether it has a `{param}` segment. */
let routes: Array<[RegExp, string[], boolean?]> | undefined;

/** Every known path pattern with its methods: the REST operations come from the OpenAPI document. */
function knownRoutes(): Array<[RegExp, string[], boolean?]> {
  if (routes) return routes;
  const paths = (buildOpenApiDocument().paths ?? {}) as Record<string, Record<string, unknown>>;
  const rest: Array<[RegExp, string[], boolean?]> = Object.entries(paths).map(([template, item]) => {
    const pattern = template
      .toLowerCase()
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\{[^/}]+\}/g, '[^/]+');
    const methods = HTTP_METHODS.filter((method) => item[method]).map((method) => method.toUpperCase());
    return [new RegExp(`^${pattern}$`), methods, template.includes('{')];
  });
  routes = [...rest, ...OTHER_ROUTES];
  return routes;
}

/** The methods a known path answers, or null for an unknown path. `route`: lower-cased, no trailing slash. */
export function allowedMethods(route: string): string[] | null {
  const matches = knownRoutes().filter(([pattern]) => pattern.test(route));
  // A literal path (`/v1/partners/tag/generate`) wins over a template it also fits (`/v1/partners/tag/{tagId}`).
  const literal = matches.filter(([, , templated]) => !templated);
  const methods = (literal.length > 0 ? literal : matches).flatMap(([, list]) => list);
  return methods.length > 0 ? [...new Set(methods)] : null;
}

/**
 * Answers a request no handler took: 405 METHOD_NOT_ALLOWED with `Allow` when the path is known
 * (another method would be answered), else 404 NOT_FOUND. Both from the one error table.
 */
export function sendUnrouted(res: ServerResponse, route: string, method: string): void {
  const allowed = allowedMethods(route);
  if (allowed && !allowed.includes(method.toUpperCase())) {
    const allow = allowed.join(', ');
    sendError(
      res,
      new AppError('METHOD_NOT_ALLOWED', `Method ${method.toUpperCase()} not allowed here; allowed: ${allow}`, {
        headers: { Allow: allow },
      }),
    );
    return;
  }
  sendError(res, new AppError('NOT_FOUND', 'Not found'));
}
