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
      'without their own `retentionDays` follow it from their next retention pass, which starts at once.',
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'DATABASE_ERROR'],
};

export const ZUpdateSettingsRequest = UpdatePartnerSettingsInput;
export const ZUpdateSettingsResponse = PartnerSettings;
