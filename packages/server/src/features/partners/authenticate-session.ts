import { and, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { apiKeys, merchantSessions, partners } from '../../db/schema/index.js';
import { hashApiKey, hashesEqual, isWellFormedSessionToken } from '../../kernel/bearer-tokens.js';
import { AppError } from '../../kernel/errors.js';
import type { ApiKeyCache } from '../../runtime/keys/key-cache.js';
import type { AuthenticatedPartner } from '../../runtime/keys/principal.js';

const INVALID_SESSION_MESSAGE = 'Invalid, expired or revoked merchant session token';

/** Resolves a merchant session token (`ms_...`) to its partner, with the session as the principal's scope. */
export async function authenticateSession(
  db: Database,
  cache: ApiKeyCache,
  token: string,
  beforeLookup?: (hash: string) => Promise<void>,
): Promise<AuthenticatedPartner> {
  if (!isWellFormedSessionToken(token)) throw new AppError('UNAUTHORIZED', INVALID_SESSION_MESSAGE);
  const hash = hashApiKey(token);
  const cached = cache.get(hash);
  if (cached?.session) {
    return {
      key: { id: cached.keyId, expiresAt: cached.expiresAt, generation: cache.version },
      ...cached.partner,
      session: cached.session,
    };
  }
  if (beforeLookup) await beforeLookup(hash);
  const token0 = cache.begin();
  const [row] = await db
    .select({
      sessionId: merchantSessions.id,
      tokenHash: merchantSessions.tokenHash,
      merchantId: merchantSessions.merchantId,
      allowedOrigins: merchantSessions.allowedOrigins,
      sessionExpiresAt: merchantSessions.expiresAt,
      keyId: apiKeys.id,
      keyExpiresAt: apiKeys.expiresAt,
      id: partners.id,
      name: partners.name,
      domain: partners.domain,
      recordName: partners.recordName,
      livemode: partners.livemode,
    })
    .from(merchantSessions)
    .innerJoin(apiKeys, eq(apiKeys.id, merchantSessions.keyId))
    .innerJoin(partners, eq(partners.id, merchantSessions.partnerId))
    .where(
      and(
        eq(merchantSessions.tokenHash, hash),
        gt(merchantSessions.expiresAt, sql`now()`),
        isNull(apiKeys.revokedAt),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`)),
      ),
    )
    .limit(1);
  if (!row || !hashesEqual(row.tokenHash, hash)) throw new AppError('UNAUTHORIZED', INVALID_SESSION_MESSAGE);
  const partner = {
    id: row.id,
    name: row.name,
    domain: row.domain,
    recordName: row.recordName,
    livemode: row.livemode,
  };
  const sessionExpiresAt = row.sessionExpiresAt.getTime();
  const session = {
    id: row.sessionId,
    merchantId: row.merchantId,
    allowedOrigins: row.allowedOrigins,
    expiresAt: sessionExpiresAt,
  };
  // The entry ends with whichever ends first: the session or its key.
  const expiresAt = Math.min(sessionExpiresAt, row.keyExpiresAt?.getTime() ?? Number.POSITIVE_INFINITY);
  cache.set(token0, { keyId: row.keyId, keyHash: hash, expiresAt, partner, session });
  return { key: { id: row.keyId, expiresAt, generation: token0 }, ...partner, session };
}
