import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import type { AppDeps } from '../context.js';
import { idempotencyKeys } from '../db/schema/index.js';
import { AppError } from '../errors.js';

/** A stored response is replayed for 24 h; older rows count as absent and are purged lazily. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A request still "in progress" after this long is taken as abandoned (its process died). */
export const IN_PROGRESS_STALE_MS = 60_000;
/** How long a second request with the key of a running one waits for its response before 409. */
export const CONCURRENT_WAIT_MS = 10_000;
const POLL_MS = 25;
const PURGE_EVERY_MS = 10 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** JSON with object keys sorted at every level: equal bodies give equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** `route`: the request's path lower-cased without trailing slashes (http/request-path.ts). */
export function requestFingerprint(method: string, route: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()} ${route}\n${canonicalJson(body)}`)
    .digest('hex');
}

function replay(res: ServerResponse, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.setHeader('idempotent-replayed', 'true');
  res.end(body);
}

/**
 * Stripe-style `Idempotency-Key` for a POST of /v1/partners/*, scoped per partner:
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
  const { db } = deps;
  purgeLazily(deps);
  const fingerprint = requestFingerprint(req.method ?? 'POST', route, body);
  const where = and(eq(idempotencyKeys.partnerId, partnerId), eq(idempotencyKeys.key, key));
  const deadline = Date.now() + CONCURRENT_WAIT_MS;

  for (;;) {
    const claimed = await db
      .insert(idempotencyKeys)
      .values({ partnerId, key, fingerprint })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (claimed.length > 0) break;

    const [row] = await db.select().from(idempotencyKeys).where(where).limit(1);
    if (!row) continue; // deleted in between (a 5xx or a purge): claim again
    const age = Date.now() - row.createdAt.getTime();
    const stale = age > IDEMPOTENCY_RETENTION_MS || (row.status === null && age > IN_PROGRESS_STALE_MS);
    if (stale) {
      await db.delete(idempotencyKeys).where(and(where, eq(idempotencyKeys.createdAt, row.createdAt)));
      continue;
    }
    if (row.fingerprint !== fingerprint) {
      throw new AppError(
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was already used with a different request (method, path or body); use a new key for a new request',
      );
    }
    if (row.status !== null) {
      replay(res, row.status, row.body ?? '');
      return 'answered';
    }
    if (Date.now() > deadline) {
      throw new AppError(
        'IDEMPOTENCY_KEY_REUSED',
        'A request with this Idempotency-Key is still being processed; retry later',
        { headers: { 'Retry-After': '1' } },
      );
    }
    await sleep(POLL_MS);
  }

  // Claimed: store the final response before it leaves.
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  let ended = false;
  res.end = ((...args: unknown[]) => {
    if (ended) return end(...args);
    ended = true;
    const [chunk] = args;
    const status = res.statusCode;
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
    const save =
      status >= 500
        ? db.delete(idempotencyKeys).where(and(where, isNull(idempotencyKeys.status)))
        : db.update(idempotencyKeys).set({ status, body: text }).where(where);
    save
      .catch((error: unknown) => {
        deps.logger.warn({ err: error }, 'could not store the idempotent response');
        // The response still goes out; drop the claim so a retry is not stuck behind it.
        return db
          .delete(idempotencyKeys)
          .where(and(where, isNull(idempotencyKeys.status)))
          .catch(() => undefined);
      })
      .finally(() => end(...args));
    return res;
  }) as typeof res.end;
  return 'run';
}

let lastPurge = 0;

/** At most every 10 minutes per process, deletes rows past retention, off the request's path. */
function purgeLazily(deps: AppDeps): void {
  const now = Date.now();
  if (now - lastPurge < PURGE_EVERY_MS) return;
  lastPurge = now;
  deps.db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.createdAt, sql`now() - make_interval(secs => ${IDEMPOTENCY_RETENTION_MS / 1000})`))
    .catch((error: unknown) => deps.logger.warn({ err: error }, 'idempotency purge failed'));
}
