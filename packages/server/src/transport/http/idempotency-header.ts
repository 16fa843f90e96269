import type { IncomingMessage } from 'node:http';
import type { AppDeps } from '../../context.js';
import { AppError } from '../../kernel/errors.js';
import { type IdempotencyClaim, requestFingerprint, type StoredResponse } from '../../runtime/idempotency-store.js';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * Stripe-style `Idempotency-Key` for a POST of /v1/partners/*, scoped per partner (the table is
 * `runtime/idempotency-store.ts`'s):
 * - no header: nothing to do (`null`);
 * - first request with a key: a row is claimed ("in progress") and returned (`{ claim }`); the
 *   REST handler's one finishing step (transport/rest/rest-handler.ts) stores the final status and body through it
 *   BEFORE the response is sent (a retry after a dropped response always finds it). A 5xx is not
 *   stored (the row is deleted) so that a retry runs again;
 * - same key, same request: the stored response (`{ replay }`), sent with `idempotent-replayed: true`;
 *   while the first is still running, the second waits for it (up to 10 s, then 409);
 * - same key, different method, path or body: 409 IDEMPOTENCY_KEY_REUSED.
 */
export async function applyIdempotency(
  deps: AppDeps,
  req: IncomingMessage,
  partnerId: string,
  route: string,
  body: unknown,
): Promise<{ claim: IdempotencyClaim } | { replay: StoredResponse } | null> {
  const header = req.headers['idempotency-key'];
  if (header === undefined) return null;
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || !KEY_PATTERN.test(key)) {
    throw new AppError(
      'VALIDATION_ERROR',
      'Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good choice)',
    );
  }
  return deps.idempotency.claim(partnerId, key, requestFingerprint(req.method ?? 'POST', route, body));
}
