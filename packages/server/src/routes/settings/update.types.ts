import { PartnerSettings, UpdatePartnerSettingsInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const updateSettingsMeta: Meta = {
  openapi: {
    method: 'PATCH',
    path: '/v1/partners/settings',
    tags: ['Settings'],
    summary: "Update the partner's settings",
    description:
      'Sets the settings given: `defaultRetentionDays` (1..3650, or null for the server default). Merchants ' +
      'without their own `retentionDays` follow it from their next retention pass, which starts at once. ' +
      "`statsDigest` (boolean) and `statsSpike` (`enabled`, `multiple` 1.5..100, default 3) switch the statistics' " +
      "webhooks: a weekly digest per merchant and an alert when an hour's visitors jump (docs: webhooks).",
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'DATABASE_ERROR'],
};

export const ZUpdateSettingsRequest = UpdatePartnerSettingsInput;
export const ZUpdateSettingsResponse = PartnerSettings;
