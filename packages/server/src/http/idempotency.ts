import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../context.js';
import { AppError } from '../errors.js';
import { requestFingerprint } from '../services/idempotency/store.js';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

function replay(res: ServerResponse, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.setHeader('idempotent-replayed', 'true');
  res.end(body);
}

/**
 * Stripe-style `Idempotency-Key` for a POST of /v1/partners/*, scoped per partner (the table is
 * `services/idempotency/store.ts`'s):
 * - no header: nothing happens (`'run'`);
 * - first request with a key: a row is claimed ("in progress"); `res.end` is wrapped so the final
 *   status and body are stored BEFORE the response is sent (a retry after a dropped response always
 *   finds it). A 5xx is not stored (the row is deleted) so that a retry runs again;
 * - same key, same request: the stored response is replayed (`idempotent-replayed: true`);
 *   while the first is still running, the second waits for it (up to 10 s, then 409);
 * - same key, different method, path or body: 409 IDEMPOTENCY_KEY_REUSED.
 * Returns `'answered'` when the response was written here.
 */
export async function applyIdempotency(
  deps: AppDeps,
  req: IncomingMessage,
  res: ServerResponse,
  partnerId: string,
  route: string,
  body: unknown,
): Promise<'run' | 'answered'> {
  const header = req.headers['idempotency-key'];
  if (header === undefined) return 'run';
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || !KEY_PATTERN.test(key)) {
    throw new AppError(
      'VALIDATION_ERROR',
      'Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good choice)',
    );
  }
  const outcome = await deps.idempotency.claim(partnerId, key, requestFingerprint(req.method ?? 'POST', route, body));
  if ('replay' in outcome) {
    replay(res, outcome.replay.status, outcome.replay.body);
    return 'answered';
  }

  // Claimed: store the final response before it leaves.
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  let ended = false;
  res.end = ((...args: unknown[]) => {
    if (ended) return end(...args);
    ended = true;
    const [chunk] = args;
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
    void outcome.claim.finish(res.statusCode, text).then(() => end(...args));
    return res;
  }) as typeof res.end;
  return 'run';
}
