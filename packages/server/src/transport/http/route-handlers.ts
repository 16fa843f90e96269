import type { AppDeps } from '../../context.js';
import type { DatabaseHandle } from '../../db/client.js';
import { buildOpenApiDocument } from '../../openapi/document.js';
import type { RouteDeclaration } from '../../routes/declare-route.js';
import { ROUTES, type RouteName } from '../../routes/route-table.js';
import { exportEvents } from '../rest/export-response.js';
import { streamEvents } from '../rest/sse-response.js';
import { handleDocs } from './docs.js';
import { sendMetrics } from './metrics-endpoint.js';
import { readiness } from './readiness.js';
import { sendJson } from './respond.js';
import { defineRoute, notFound, type Route, type RouteHandler } from './run-route.js';

type Handlers = { [Name in RouteName]: RouteHandler<Extract<(typeof ROUTES)[number], { name: Name }>> };

/** The handlers of routes/route-table.ts, one per route (a route without one does not compile). */
export function createRoutes(deps: AppDeps, database: DatabaseHandle, baseUrl: string | undefined): Route[] {
  let openApiJson: string | undefined;
  const handlers: Handlers = {
    health: ({ res }) => sendJson(res, 200, { status: 'ok' }),
    readiness: async ({ res }) => {
      const { status, body } = await readiness(deps, database);
      sendJson(res, status, body);
    },
    'openapi document': ({ res }) => {
      openApiJson ??= JSON.stringify(buildOpenApiDocument(baseUrl));
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.setHeader('cache-control', 'public, max-age=300');
      res.end(openApiJson);
    },
    docs: async ({ req, res, path }) => {
      if (!(await handleDocs(res, path.pathname, req.method ?? 'GET'))) notFound(res);
    },
    metrics: ({ req, res }) => sendMetrics(deps, req, res),
    'event stream': (context) => streamEvents(deps, context),
    'event export': (context) => exportEvents(deps, context),
  };
  return ROUTES.map((declaration) =>
    defineRoute(deps, declaration as RouteDeclaration, handlers[declaration.name] as RouteHandler<RouteDeclaration>),
  );
}
