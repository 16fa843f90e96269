import {
  type MerchantSession,
  SESSION_LIFETIME_DEFAULT_SECONDS,
  SESSION_LIFETIME_MAX_SECONDS,
} from '@partner/shared-schemas';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { merchantSessions } from '../../db/schema/index.js';
import { generateSessionToken } from '../../kernel/bearer-tokens.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { findOwnMerchant } from './find-merchant.js';

export interface CreateSessionParams {
  merchantId: string;
  /** Already validated and normalised (shared-schemas `CreateMerchantSessionInput`). */
  allowedOrigins: string[];
  lifetimeSeconds?: number | undefined;
}

/**
 * A merchant session: a token that reads one merchant's statistics and tag status from the listed origins until it
 * expires or the API key that created it stops being usable.
 */
export async function createMerchantSession(
  db: Database,
  partner: AuthenticatedPartner,
  params: CreateSessionParams,
): Promise<MerchantSession> {
  if (!partner.key || partner.session) {
    throw new AppError('SESSION_SCOPE', 'Merchant sessions are created with an API key');
  }
  await findOwnMerchant(db, partner, params.merchantId);
  const lifetime = Math.min(params.lifetimeSeconds ?? SESSION_LIFETIME_DEFAULT_SECONDS, SESSION_LIFETIME_MAX_SECONDS);
  const { token, hash } = generateSessionToken();
  const [row] = await db
    .insert(merchantSessions)
    .values({
      partnerId: partner.id,
      merchantId: params.merchantId,
      keyId: partner.key.id,
      tokenHash: hash,
      allowedOrigins: params.allowedOrigins,
      expiresAt: sql`now() + make_interval(secs => ${lifetime})`,
    })
    .returning({ expiresAt: merchantSessions.expiresAt });
  // Rows past their expiry serve no one; a day's grace keeps them for inspection.
  await db
    .delete(merchantSessions)
    .where(
      and(eq(merchantSessions.partnerId, partner.id), lt(merchantSessions.expiresAt, sql`now() - interval '1 day'`)),
    );
  return {
    token,
    merchantId: params.merchantId,
    allowedOrigins: params.allowedOrigins,
    expiresAt: row!.expiresAt.toISOString(),
  };
}
