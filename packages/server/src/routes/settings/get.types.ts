import { PartnerSettings } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const getSettingsMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/settings',
    tags: ['Settings'],
    summary: "Get the partner's settings",
    description:
      "The partner's own settings: `defaultRetentionDays`, the days its merchants' events are kept unless a " +
      "merchant sets `retentionDays` (null: the server's default; without one, kept forever); `statsDigest` and " +
      "`statsSpike`, the statistics' webhooks (`stats.digest`, `stats.spike`) and the spike's multiple.",
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'DATABASE_ERROR'],
};

export const ZGetSettingsResponse = PartnerSettings;
