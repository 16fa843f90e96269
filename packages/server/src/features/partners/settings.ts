import { type PartnerSettings, STATS_SPIKE_MULTIPLE_DEFAULT } from '@partner/shared-schemas';
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { partnerSettings } from '../../db/schema/index.js';
import type { AuthenticatedPartner } from './authenticate.js';

/** `GET /v1/partners/settings`: the partner's settings (null or the defaults where it set none). */
export async function getPartnerSettings(db: Database, partner: AuthenticatedPartner): Promise<PartnerSettings> {
  const [row] = await db
    .select({
      defaultRetentionDays: partnerSettings.defaultRetentionDays,
      statsDigest: partnerSettings.statsDigest,
      statsSpike: partnerSettings.statsSpike,
      statsSpikeMultiple: partnerSettings.statsSpikeMultiple,
    })
    .from(partnerSettings)
    .where(eq(partnerSettings.partnerId, partner.id))
    .limit(1);
  return {
    defaultRetentionDays: row?.defaultRetentionDays ?? null,
    statsDigest: row?.statsDigest ?? false,
    statsSpike: {
      enabled: row?.statsSpike ?? false,
      multiple: Number(row?.statsSpikeMultiple ?? STATS_SPIKE_MULTIPLE_DEFAULT),
    },
  };
}

export interface PartnerSettingsChange {
  defaultRetentionDays?: number | null | undefined;
  statsDigest?: boolean | undefined;
  statsSpike?: { enabled?: boolean | undefined; multiple?: number | undefined } | undefined;
}

/** `PATCH /v1/partners/settings`: sets the given settings; the statistics' switches take effect at the jobs' next look. */
export async function updatePartnerSettings(
  db: Database,
  partner: AuthenticatedPartner,
  input: PartnerSettingsChange,
): Promise<PartnerSettings> {
  const set: Partial<typeof partnerSettings.$inferInsert> = {};
  if (input.defaultRetentionDays !== undefined) set.defaultRetentionDays = input.defaultRetentionDays;
  if (input.statsDigest !== undefined) set.statsDigest = input.statsDigest;
  if (input.statsSpike?.enabled !== undefined) set.statsSpike = input.statsSpike.enabled;
  if (input.statsSpike?.multiple !== undefined) set.statsSpikeMultiple = input.statsSpike.multiple;
  if (Object.keys(set).length > 0) {
    const retention = input.defaultRetentionDays === undefined ? {} : { retentionUpdatedAt: sql`now()` };
    await db
      .insert(partnerSettings)
      .values({ partnerId: partner.id, ...set })
      .onConflictDoUpdate({ target: partnerSettings.partnerId, set: { ...set, ...retention } });
  }
  return getPartnerSettings(db, partner);
}
