import type { ZodOpenApiPathsObject } from 'zod-openapi';
import type { ErrorReason } from '../kernel/errors.js';
import type { RouteDeclaration, RouteDocs } from '../routes/declare-route.js';
import { documentedRoutes } from '../routes/route-table.js';
import { componentSchema } from './schemas.js';

type Json = Record<string, unknown>;
type Paths = Record<string, Record<string, Json>>;

/** The documented routes as trpc-to-openapi's extra paths. `addRouteOperations` completes each one. */
export function routePaths(): ZodOpenApiPathsObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of documentedRoutes()) {
    const item: Json = {};
    for (const method of route.methods) {
      item[method.toLowerCase()] = { ...(route.query ? { requestParams: { query: route.query } } : {}), responses: {} };
    }
    paths[route.path] = item;
  }
  return paths;
}

function addComponents(schemas: Json, components: RouteDocs['components']): void {
  for (const [name, component] of Object.entries(components ?? {})) {
    if ('json' in component) {
      schemas[name] ??= structuredClone(component.json);
      continue;
    }
    const { zod, ...extra } = component;
    schemas[name] ??= { ...componentSchema(zod), ...structuredClone(extra) };
  }
}

/** A header that may carry a query parameter (`queryFromHeaders`), as a header parameter. */
function headerParameters(route: RouteDeclaration): Json[] {
  return Object.values(route.queryFromHeaders ?? {}).map((name) => ({ name, in: 'header', required: false }));
}

/** Writes each documented route's operations into `doc`. */
export function addRouteOperations(
  doc: { paths?: unknown; components?: { schemas?: unknown } },
  errorResponses: (reasons: ErrorReason[], authenticated: boolean) => Json,
  finish: (operation: Json, route: RouteDeclaration) => void,
): void {
  const paths = (doc.paths ?? {}) as Paths;
  const schemas = (doc.components?.schemas ?? {}) as Json;
  for (const route of documentedRoutes()) {
    const docs = route.docs as RouteDocs;
    addComponents(schemas, docs.components);
    const item = paths[route.path] ?? {};
    for (const method of route.methods.map((m) => m.toLowerCase())) {
      const generated = (item[method]?.parameters ?? []) as Json[];
      const parameters = [...generated, ...headerParameters(route)].map((parameter) => ({
        ...parameter,
        ...structuredClone(docs.parameters?.[parameter.name as string] ?? {}),
      }));
      const authenticated = route.auth === 'partner';
      const responses: Record<string, Json> = {
        '200': structuredClone(docs.success),
        ...(errorResponses(route.errors, authenticated) as Record<string, Json>),
      };
      for (const [status, description] of Object.entries(docs.errorDescriptions ?? {})) {
        const response = responses[status];
        if (response) response.description = description;
      }
      const operation: Json = {
        operationId: docs.operationId,
        tags: [...docs.tags],
        summary: docs.summary,
        description: docs.description,
        ...(authenticated ? { security: [{ Authorization: [] }] } : {}),
        parameters,
        responses,
      };
      finish(operation, route);
      item[method] = operation;
    }
    paths[route.path] = item;
  }
  doc.paths = paths;
}
