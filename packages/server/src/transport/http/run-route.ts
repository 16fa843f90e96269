import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { AppDeps } from '../../context.js';
import type { AuthenticatedPartner } from '../../features/partners/authenticate.js';
import { sessionScopeError } from '../../features/partners/session-scope.js';
import { AppError, isServerFailure, toAppError } from '../../kernel/errors.js';
import { isApiPath, type RouteDeclaration } from '../../routes/declare-route.js';
import { sendUnrouted } from '../rest/allowed-methods.js';
import { checkMetricsToken } from './metrics-endpoint.js';
import { clientOf } from './request-client.js';
import type { RequestPath } from './request-path.js';
import { sendError } from './respond.js';
import { applySessionCors } from './session-cors.js';

export type TracedRequest = IncomingMessage & { requestId: string };

/** What a route's handler gets once the prologue passed: the caller and the validated query. */
export interface RouteContext<D extends RouteDeclaration> {
  req: TracedRequest;
  res: ServerResponse;
  path: RequestPath;
  partner: D['auth'] extends 'partner' ? AuthenticatedPartner : null;
  query: D['query'] extends z.ZodType ? z.output<D['query']> : undefined;
}

export type RouteHandler<D extends RouteDeclaration> = (context: RouteContext<D>) => Promise<void> | void;

/** A declaration with its handler: what the dispatcher runs. */
export interface Route {
  declaration: RouteDeclaration;
  run(req: TracedRequest, res: ServerResponse, path: RequestPath): Promise<void>;
}

export function notFound(res: ServerResponse): void {
  sendError(res, new AppError('NOT_FOUND', 'Not found'));
}

/** The query of a request, with the parameters its headers may carry instead (the header wins). */
function queryOf(req: IncomingMessage, fromHeaders: Record<string, string> | undefined): Record<string, unknown> {
  const query: Record<string, unknown> = Object.fromEntries(new URL(req.url ?? '/', 'http://localhost').searchParams);
  for (const [parameter, name] of Object.entries(fromHeaders ?? {})) {
    const header = req.headers[name.toLowerCase()];
    query[parameter] = (Array.isArray(header) ? header[0] : header) ?? query[parameter];
  }
  return query;
}

/** A route: the prologue every route shares, written once, then `handler`. */
export function defineRoute<const D extends RouteDeclaration>(
  deps: AppDeps,
  declaration: D,
  handler: RouteHandler<D>,
): Route {
  const methods: readonly string[] = declaration.methods;
  return {
    declaration,
    async run(req, res, path) {
      if (isApiPath(declaration.path)) res.setHeader('cache-control', 'no-store');
      const method = req.method ?? 'GET';
      if (!methods.includes(method)) {
        if (declaration.hidden) notFound(res);
        else sendUnrouted(res, path.route, method);
        return;
      }
      try {
        let partner: AuthenticatedPartner | null = null;
        if (declaration.auth === 'partner') {
          partner = await deps.limits.authenticate(req.headers.authorization, clientOf(req, res));
          // No route of the table is open to merchant sessions.
          if (partner.session) {
            applySessionCors(req, res, partner.session);
            throw sessionScopeError();
          }
        } else if (declaration.auth === 'metrics-token' && !(await checkMetricsToken(deps, req, res))) {
          notFound(res);
          return;
        }
        let query: unknown;
        if (declaration.query) {
          const parsed = declaration.query.safeParse(queryOf(req, declaration.queryFromHeaders));
          if (!parsed.success) throw toAppError(parsed.error);
          query = parsed.data;
        }
        await handler({ req, res, path, partner, query } as RouteContext<D>);
      } catch (error) {
        const appError = toAppError(error, { retrySafe: true });
        if (isServerFailure(appError)) {
          deps.logger.error({ err: error, requestId: req.requestId }, `${declaration.name} failed to open`);
        }
        if (res.headersSent) res.end();
        else sendError(res, appError);
      }
    },
  };
}

/** The route a request is for: paths under /v1/ compared as REST paths, the others exactly. */
export function matchRoute(routes: readonly Route[], path: RequestPath): Route | undefined {
  return routes.find(({ declaration }) => {
    const candidate = isApiPath(declaration.path) ? path.route : path.pathname;
    return (
      candidate === declaration.path || (declaration.prefix === true && candidate.startsWith(`${declaration.path}/`))
    );
  });
}
