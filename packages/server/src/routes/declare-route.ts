import type { z } from 'zod';
import type { ErrorReason } from '../kernel/errors.js';

type RouteMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call a route: an API key, anyone, or the holder of METRICS_TOKEN. */
type RouteAuth = 'partner' | 'none' | 'metrics-token';

/** A component schema a documented route refers to: from a zod schema (with extras), or as JSON. */
type ComponentDoc = { zod: z.ZodType; description?: string; example?: unknown } | { json: Record<string, unknown> };

/** What the OpenAPI document says of a route (openapi/route-operations.ts builds its operation). */
export interface RouteDocs {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  /** Per parameter, fields that replace what the query schema gives (description, schema, example...). */
  parameters?: Record<string, Record<string, unknown>>;
  /** The 200 response object. */
  success: Record<string, unknown>;
  /** Descriptions that replace the error table's for a status. */
  errorDescriptions?: Record<number, string>;
  /** Component schemas the operation refers to (added when the document does not have them). */
  components?: Record<string, ComponentDoc>;
}

/** A route that is not a tRPC procedure: what it answers and how it is described. */
export interface RouteDeclaration {
  /** Names the route in logs ("<name> failed to open") and in the handler table. */
  name: string;
  path: string;
  methods: readonly RouteMethod[];
  /** Also answers every path under `path/`. */
  prefix?: boolean;
  /** Unknown unless it answers: a refused method (or METRICS_TOKEN unset) is 404, and no `Allow` names it. */
  hidden?: boolean;
  auth: RouteAuth;
  /** The query, validated before the handler runs (400 VALIDATION_ERROR naming the parameter). */
  query?: z.ZodType;
  /** Query parameters a request header may carry instead (the header wins), by parameter: header name. */
  queryFromHeaders?: Record<string, string>;
  /** The failures the route answers, for the document. */
  errors: ErrorReason[];
  /** Present for a route of the public API: it is then in the OpenAPI document. */
  docs?: RouteDocs;
}

export function declareRoute<const D extends RouteDeclaration>(declaration: D): D {
  return declaration;
}

/** Paths under /v1/ compare as REST paths do (case and trailing slashes ignored); the others exactly. */
export function isApiPath(path: string): boolean {
  return path.startsWith('/v1/');
}
