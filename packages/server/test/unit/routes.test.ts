// One list of routes (src/routes/route-table.ts) feeds the dispatcher, `Allow` and the OpenAPI
// document: every documented route is in the document with its methods, and `Allow` for every
// known path (the procedures' and the routes') names exactly the methods that path answers.
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/openapi/document.js';
import type { RouteDeclaration } from '../../src/routes/declare-route.js';
import { ROUTES } from '../../src/routes/route-table.js';
import { allowedMethods } from '../../src/transport/rest/allowed-methods.js';

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const routes: readonly RouteDeclaration[] = ROUTES;
const paths = (buildOpenApiDocument().paths ?? {}) as Record<string, Record<string, unknown>>;

/** A concrete request path for a template (`{tagId}` filled in), as the listener compares it. */
const concrete = (template: string) => template.toLowerCase().replace(/\{[^}]+\}/g, '3f2b6c1e');

describe('routes (src/routes/route-table.ts)', () => {
  it('puts every documented route in the OpenAPI document with exactly its methods', () => {
    const documented = routes.filter((route) => route.docs);
    expect(documented.map((route) => route.path)).toEqual(['/v1/partners/events/stream', '/v1/partners/events/export']);
    for (const route of documented) {
      const item = paths[route.path] ?? {};
      const methods = OPERATION_METHODS.filter((method) => item[method]).map((method) => method.toUpperCase());
      expect(methods, route.path).toEqual([...route.methods]);
      for (const method of methods) {
        const operation = item[method.toLowerCase()] as { operationId: string; responses: Record<string, unknown> };
        expect(operation.operationId).toBe(route.docs?.operationId);
        expect(Object.keys(operation.responses)).toContain('200');
      }
    }
  });

  it('keeps undocumented routes out of the document', () => {
    for (const route of routes.filter((r) => !r.docs)) expect(paths[route.path], route.path).toBeUndefined();
  });

  it("answers Allow for every path of the document with that path's methods", () => {
    expect(Object.keys(paths).length).toBeGreaterThan(10);
    for (const [template, item] of Object.entries(paths)) {
      const methods = OPERATION_METHODS.filter((method) => item[method]).map((method) => method.toUpperCase());
      expect(allowedMethods(concrete(template)), template).toEqual(methods);
    }
  });

  it('answers Allow for every route with its declared methods, and none for a hidden one', () => {
    for (const route of routes) {
      const expected = route.hidden ? null : [...route.methods];
      expect(allowedMethods(route.path), route.path).toEqual(expected);
      if (route.prefix) expect(allowedMethods(`${route.path}/anything`), route.path).toEqual(expected);
    }
    expect(allowedMethods('/v1/partners/nothing-here')).toBeNull();
  });
});
