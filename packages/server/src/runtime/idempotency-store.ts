import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { idempotencyKeys } from '../db/schema/index.js';
import { AppError, isServerFailure } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';

/** A stored response is replayed for 24 h; older rows count as absent and are purged lazily. */
const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A request still "in progress" after this long is taken as abandoned (its process died). */
const IN_PROGRESS_STALE_MS = 60_000;
/** How long a second request with the key of a running one waits for its response before 409. */
const CONCURRENT_WAIT_MS = 10_000;
const POLL_MS = 25;
const PURGE_EVERY_MS = 10 * 60 * 1000;

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

/** What makes two requests "the same": method, route and canonical body. */
export function requestFingerprint(method: string, route: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()} ${route}\n${canonicalJson(body)}`)
    .digest('hex');
}

/**
 * What may be stored for a replay. Secrets are never written to the idempotency table; the first response carries the
 * secret, a replay tells the client it is not there.
 */
function withoutSecrets(body: string): string {
  if (!body.includes('"secret"')) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !('secret' in parsed)) return body;
  if ((parsed as { secret: unknown }).secret === null) return body;
  return JSON.stringify({ ...parsed, secret: null, secretOmitted: true });
}

/** A response stored for a key, to replay. */
export interface StoredResponse {
  status: number;
  body: string;
}

/** One claimed key: the running request stores its response through it. */
export interface IdempotencyClaim {
  /** Stores the final response (a 5xx drops the claim, so a retry runs again). Never throws. */
  finish(status: number, body: string): Promise<void>;
}

/** The `idempotency_keys` table: Stripe-style keys scoped per partner. */
export class IdempotencyStore {
  private lastPurge = 0;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Claims `key` for a request, or finds its stored response:
   * - first request with the key: a row is claimed ("in progress") and the claim returned;
   * - same key, same request, already answered: `{ replay }`;
   * - while the first is still running, waits for it (up to CONCURRENT_WAIT_MS, then 409);
   * - same key, different request (fingerprint): 409 IDEMPOTENCY_KEY_REUSED.
   */
  async claim(
    partnerId: string,
    key: string,
    fingerprint: string,
  ): Promise<{ claim: IdempotencyClaim } | { replay: StoredResponse }> {
    const { db } = this;
    this.purgeLazily();
    const where = and(eq(idempotencyKeys.partnerId, partnerId), eq(idempotencyKeys.key, key));
    const deadline = this.now() + CONCURRENT_WAIT_MS;

    for (;;) {
      const claimed = await db
        .insert(idempotencyKeys)
        .values({ partnerId, key, fingerprint })
        .onConflictDoNothing()
        .returning({ key: idempotencyKeys.key });
      if (claimed.length > 0) break;

      const [row] = await db.select().from(idempotencyKeys).where(where).limit(1);
      if (!row) continue; // deleted in between (a 5xx or a purge): claim again
      const age = this.now() - row.createdAt.getTime();
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
      if (row.status !== null) return { replay: { status: row.status, body: withoutSecrets(row.body ?? '') } };
      if (this.now() > deadline) {
        throw new AppError(
          'IDEMPOTENCY_KEY_REUSED',
          'A request with this Idempotency-Key is still being processed; retry later',
          { headers: { 'Retry-After': '1' } },
        );
      }
      await sleep(POLL_MS);
    }

    const dropClaim = () => db.delete(idempotencyKeys).where(and(where, isNull(idempotencyKeys.status)));
    return {
      claim: {
        finish: (status, body) =>
          (isServerFailure(status)
            ? dropClaim()
            : db
                .update(idempotencyKeys)
                .set({ status, body: withoutSecrets(body) })
                .where(where)
          ).then(
            () => undefined,
            (error: unknown) => {
              this.logger.warn({ err: error }, 'could not store the idempotent response');
              // The response still goes out; drop the claim so a retry is not stuck behind it.
              return dropClaim().then(
                () => undefined,
                () => undefined,
              );
            },
          ),
      },
    };
  }

  /** At most every 10 minutes per process, deletes rows past retention, off the request's path. */
  private purgeLazily(): void {
    const now = this.now();
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    this.db
      .delete(idempotencyKeys)
      .where(lt(idempotencyKeys.createdAt, sql`now() - make_interval(secs => ${IDEMPOTENCY_RETENTION_MS / 1000})`))
      .catch((error: unknown) => this.logger.warn({ err: error }, 'idempotency purge failed'));
  }
}
