import { declareRoute, type RouteDeclaration } from './declare-route.js';
import { EVENT_EXPORT_ROUTE } from './events/export.route.js';
import { EVENT_STREAM_ROUTE } from './events/stream.route.js';

export const DOCS_PATH = '/docs';
export const METRICS_PATH = '/metrics';

/** Every route that is not a tRPC procedure: the dispatcher, `Allow` and the document read this list. */
export const ROUTES = [
  declareRoute({ name: 'health', path: '/healthz', methods: ['GET', 'HEAD'], auth: 'none', errors: [] }),
  /** The database and the event log reported separately (transport/http/readiness.ts). */
  declareRoute({ name: 'readiness', path: '/readyz', methods: ['GET', 'HEAD'], auth: 'none', errors: ['NOT_READY'] }),
  declareRoute({ name: 'openapi document', path: '/openapi.json', methods: ['GET'], auth: 'none', errors: [] }),
  /** The API reference (Swagger UI) and its assets; another path under it is 404. */
  declareRoute({
    name: 'docs',
    path: DOCS_PATH,
    prefix: true,
    methods: ['GET', 'HEAD'],
    auth: 'none',
    errors: ['NOT_FOUND'],
  }),
  /** On the main port only with METRICS_TOKEN (else 404); METRICS_PORT serves it without (app.ts). */
  declareRoute({
    name: 'metrics',
    path: METRICS_PATH,
    hidden: true,
    methods: ['GET', 'HEAD'],
    auth: 'metrics-token',
    errors: ['UNAUTHORIZED', 'RATE_LIMITED'],
  }),
  EVENT_STREAM_ROUTE,
  EVENT_EXPORT_ROUTE,
] as const satisfies readonly RouteDeclaration[];

export type RouteName = (typeof ROUTES)[number]['name'];

/** The routes of the public API (those with docs): the OpenAPI document describes them. */
export function documentedRoutes(): RouteDeclaration[] {
  return ROUTES.filter((route: RouteDeclaration) => route.docs !== undefined);
}
