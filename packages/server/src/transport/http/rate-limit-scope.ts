import type { ServerResponse } from 'node:http';
import type { RateLimitScope } from '../../kernel/metrics.js';

/** The scope of a 429 this response carries, when it is not the per-key or per-address limit. */
const rateLimitScopes = new WeakMap<ServerResponse, RateLimitScope>();

export function markRateLimitScope(res: ServerResponse, scope: RateLimitScope): void {
  rateLimitScopes.set(res, scope);
}

export function rateLimitScopeOf(res: ServerResponse): RateLimitScope | undefined {
  return rateLimitScopes.get(res);
}
