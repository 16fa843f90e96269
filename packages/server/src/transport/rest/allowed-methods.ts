import type { ServerResponse } from 'node:http';
import { AppError } from '../../kernel/errors.js';
import type { RouteDeclaration } from '../../routes/declare-route.js';
import { allProcedureMeta } from '../../routes/procedure-meta.js';
import { ROUTES } from '../../routes/route-table.js';
import { sendError } from '../http/respond.js';

/** The order methods are listed in `Allow` (the OpenAPI document's order of operations). */
const HTTP_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];

interface KnownPath {
  pattern: RegExp;
  methods: string[];
  /** Has a `{param}` segment. */
  templated: boolean;
  /** The path itself, for a literal REST path (no `{param}`, no prefix). */
  literal?: string;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

/** Every known path with its methods. */
function knownPaths(): KnownPath[] {
  const byTemplate = new Map<string, Set<string>>();
  for (const { meta } of allProcedureMeta()) {
    if (!meta.openapi) continue;
    const methods = byTemplate.get(meta.openapi.path) ?? new Set();
    methods.add(meta.openapi.method.toUpperCase());
    byTemplate.set(meta.openapi.path, methods);
  }
  const procedures = [...byTemplate].map(([template, methods]) => ({
    pattern: new RegExp(`^${escapeRegExp(template.toLowerCase()).replace(/\{[^/}]+\}/g, '[^/]+')}$`),
    methods: HTTP_METHODS.filter((method) => methods.has(method)),
    templated: template.includes('{'),
    literal: template.includes('{') ? undefined : template.toLowerCase(),
  }));
  const routes = (ROUTES as readonly RouteDeclaration[])
    .filter((route) => !route.hidden)
    .map((route) => ({
      pattern: new RegExp(`^${escapeRegExp(route.path)}${route.prefix ? '(/.*)?' : ''}$`),
      methods: [...route.methods],
      templated: false,
    }));
  return [...procedures, ...routes];
}

let known: KnownPath[] | undefined;

/** The methods a known path answers, or null for an unknown path. `route`: lower-cased, no trailing slash. */
export function allowedMethods(route: string): string[] | null {
  known ??= knownPaths();
  const matches = known.filter(({ pattern }) => pattern.test(route));
  // A literal path (`/v1/partners/tag/generate`) wins over a template it also fits (`/v1/partners/tag/{tagId}`).
  const literal = matches.filter(({ templated }) => !templated);
  const methods = (literal.length > 0 ? literal : matches).flatMap(({ methods }) => methods);
  return methods.length > 0 ? [...new Set(methods)] : null;
}

let literals: Map<string, string[]> | undefined;

/** The methods of a literal path (no `{param}`), or undefined for any other path. */
export function literalPathMethods(route: string): string[] | undefined {
  if (!literals) {
    known ??= knownPaths();
    literals = new Map();
    for (const { literal, methods } of known) {
      if (literal) literals.set(literal, [...(literals.get(literal) ?? []), ...methods]);
    }
  }
  return literals.get(route);
}

/** Answers a request no handler took. Both from the one error table. */
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
