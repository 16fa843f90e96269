import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { apiKeys, partners } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import { generateApiKey } from './key-hash.js';

export const DEFAULT_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

const usable = and(isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`)));

async function requirePartner(db: Database, partnerId: string): Promise<void> {
  const valid = /^[0-9a-f-]{36}$/i.test(partnerId);
  const [row] = valid
    ? await db.select({ id: partners.id }).from(partners).where(eq(partners.id, partnerId)).limit(1)
    : [];
  if (!row) throw new AppError('NOT_FOUND', `No partner ${partnerId}`);
}

/**
 * Issues a new key. The partner's other usable keys stay valid for `overlapMs` (default 24 h) so
 * deployments can switch over; 0 cuts them at once. Every server forgets its cached keys on the
 * trigger's notification (migration 0005); an app's own `keys.rotate` (runtime/keys/api-keys.ts)
 * also forgets at once.
 */
export async function rotateApiKey(
  db: Database,
  partnerId: string,
  overlapMs = DEFAULT_ROTATION_OVERLAP_MS,
): Promise<{ apiKey: string; oldKeysExpireAt: string }> {
  await requirePartner(db, partnerId);
  const key = generateApiKey();
  const expiresAt = new Date(Date.now() + overlapMs);
  await db.transaction(async (tx) => {
    await tx
      .update(apiKeys)
      .set({
        expiresAt: sql`least(coalesce(${apiKeys.expiresAt}, 'infinity'::timestamptz), ${expiresAt.toISOString()}::timestamptz)`,
      })
      .where(and(eq(apiKeys.partnerId, partnerId), usable));
    await tx.insert(apiKeys).values({ partnerId, keyHash: key.hash, keyPrefix: key.prefix });
  });
  return { apiKey: key.key, oldKeysExpireAt: expiresAt.toISOString() };
}

/** Revokes every usable key of the partner at once; returns how many were revoked. */
export async function revokeApiKeys(db: Database, partnerId: string): Promise<number> {
  await requirePartner(db, partnerId);
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiKeys.partnerId, partnerId), usable))
    .returning({ id: apiKeys.id });
  return revoked.length;
}

export interface PartnerListing {
  partnerId: string;
  name: string;
  domain: string;
  recordName: string;
  createdAt: string;
  keys: Array<{
    prefix: string;
    createdAt: string;
    expiresAt: string | null;
    revokedAt: string | null;
    lastUsedAt: string | null;
  }>;
}

export async function listPartners(db: Database): Promise<PartnerListing[]> {
  const rows = await db.select().from(partners).orderBy(asc(partners.createdAt));
  const keys = await db.select().from(apiKeys).orderBy(asc(apiKeys.createdAt));
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return rows.map((p) => ({
    partnerId: p.id,
    name: p.name,
    domain: p.domain,
    recordName: p.recordName,
    createdAt: p.createdAt.toISOString(),
    keys: keys
      .filter((k) => k.partnerId === p.id)
      .map((k) => ({
        prefix: k.keyPrefix,
        createdAt: k.createdAt.toISOString(),
        expiresAt: iso(k.expiresAt),
        revokedAt: iso(k.revokedAt),
        lastUsedAt: iso(k.lastUsedAt),
      })),
  }));
}

export async function countPartners(db: Database): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(partners);
  return row?.n ?? 0;
}
