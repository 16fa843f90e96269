import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { apiKeys, partners } from '../../db/schema/index.js';
import { generateApiKey } from '../../kernel/bearer-tokens.js';
import { AppError } from '../../kernel/errors.js';

export const DEFAULT_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

const usable = and(isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`)));

/** Which of a partner's two rows a key command acts on: the live partner or its test-mode twin. */
export type KeyMode = 'live' | 'test';

/** The partner row whose keys `mode` names: the live partner `partnerId` itself, or its test-mode twin. */
async function partnerRowOf(db: Database, partnerId: string, mode: KeyMode): Promise<string> {
  const valid = /^[0-9a-f-]{36}$/i.test(partnerId);
  const [row] = valid
    ? await db
        .select({ id: partners.id })
        .from(partners)
        .where(
          mode === 'live'
            ? and(eq(partners.id, partnerId), eq(partners.livemode, true))
            : and(eq(partners.livePartnerId, partnerId), eq(partners.livemode, false)),
        )
        .limit(1)
    : [];
  if (!row) throw new AppError('NOT_FOUND', `No partner ${partnerId}${mode === 'test' ? ' with a test mode' : ''}`);
  return row.id;
}

/** Issues a new key. */
export async function rotateApiKey(
  db: Database,
  livePartnerId: string,
  overlapMs = DEFAULT_ROTATION_OVERLAP_MS,
  mode: KeyMode = 'live',
): Promise<{ apiKey: string; oldKeysExpireAt: string }> {
  const partnerId = await partnerRowOf(db, livePartnerId, mode);
  const key = generateApiKey(mode);
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

/** Revokes every usable key of the partner's `mode` at once; returns how many were revoked. */
export async function revokeApiKeys(db: Database, livePartnerId: string, mode: KeyMode = 'live'): Promise<number> {
  const partnerId = await partnerRowOf(db, livePartnerId, mode);
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
  /** The test-mode twin's id (its `mp_test_` keys are listed with the live ones, `mode` tells them apart). */
  testPartnerId: string | null;
  createdAt: string;
  keys: Array<{
    mode: KeyMode;
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
  const twinOf = new Map(rows.filter((p) => !p.livemode).map((p) => [p.livePartnerId, p.id]));
  return rows
    .filter((p) => p.livemode)
    .map((p) => ({
      partnerId: p.id,
      name: p.name,
      domain: p.domain,
      recordName: p.recordName,
      testPartnerId: twinOf.get(p.id) ?? null,
      createdAt: p.createdAt.toISOString(),
      keys: keys
        .filter((k) => k.partnerId === p.id || k.partnerId === twinOf.get(p.id))
        .map((k) => ({
          mode: (k.partnerId === p.id ? 'live' : 'test') as KeyMode,
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
