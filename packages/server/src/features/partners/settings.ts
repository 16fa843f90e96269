import type { PartnerSettings } from '@partner/shared-schemas';
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { partnerSettings } from '../../db/schema/index.js';
import type { AuthenticatedPartner } from './authenticate.js';

/** `GET /v1/partners/settings`: the partner's settings (null where it set none). */
export async function getPartnerSettings(db: Database, partner: AuthenticatedPartner): Promise<PartnerSettings> {
  const [row] = await db
    .select({ defaultRetentionDays: partnerSettings.defaultRetentionDays })
    .from(partnerSettings)
    .where(eq(partnerSettings.partnerId, partner.id))
    .limit(1);
  return { defaultRetentionDays: row?.defaultRetentionDays ?? null };
}

/** `PATCH /v1/partners/settings`: sets the given settings. */
export async function updatePartnerSettings(
  db: Database,
  partner: AuthenticatedPartner,
  input: { defaultRetentionDays?: number | null | undefined },
): Promise<PartnerSettings> {
  if (input.defaultRetentionDays !== undefined) {
    await db
      .insert(partnerSettings)
      .values({ partnerId: partner.id, defaultRetentionDays: input.defaultRetentionDays })
      .onConflictDoUpdate({
        target: partnerSettings.partnerId,
        set: { defaultRetentionDays: input.defaultRetentionDays, retentionUpdatedAt: sql`now()` },
      });
  }
  return getPartnerSettings(db, partner);
}
