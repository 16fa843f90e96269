import { z } from 'zod';
import {
  StatsDigestSetting,
  StatsDigestSettingInput,
  StatsSpikeSettings,
  StatsSpikeSettingsInput,
} from './stats-notices.js';

/** Retention periods are whole days, 1 day to 10 years. */
export const RETENTION_DAYS_MAX = 3650;

/**
 * Days a merchant's events are kept (by `event_time`); older ones are removed in the background.
 * `null`: inherit (the merchant from its partner's default, the partner from the server's).
 */
export const RetentionDays = z
  .number({ message: 'must be an integer number of days or null' })
  .int({ message: 'must be an integer number of days' })
  .min(1, { message: 'must be at least 1 day' })
  .max(RETENTION_DAYS_MAX, { message: `must be at most ${RETENTION_DAYS_MAX} days` })
  .nullable()
  .meta({ example: 90 });

/**
 * The same in request bodies, as a pipe: trpc-to-openapi makes every bare number of a REST input
 * coercing (`"30"` and `true` would pass); it leaves pipes alone.
 */
export const RetentionDaysInput = RetentionDays.transform((days) => days);

/** `GET /v1/partners/settings`: the partner's own settings. */
export const PartnerSettings = z
  .object({
    defaultRetentionDays: RetentionDays.meta({
      description:
        "Days its merchants' events are kept unless a merchant sets `retentionDays`; null: the server's default " +
        '(kept forever when the server sets none).',
      example: 365,
    }),
    statsDigest: StatsDigestSetting,
    statsSpike: StatsSpikeSettings,
  })
  .meta({ id: 'PartnerSettings' });
export type PartnerSettings = z.infer<typeof PartnerSettings>;

/** `PATCH /v1/partners/settings`: the fields given change, the others stay. */
export const UpdatePartnerSettingsInput = z
  .object({
    defaultRetentionDays: RetentionDaysInput.optional().meta({
      description: "1..3650 days, or null for the server's default.",
      example: 365,
    }),
    statsDigest: StatsDigestSettingInput.optional(),
    statsSpike: StatsSpikeSettingsInput.optional(),
  })
  .refine(
    (input) =>
      input.defaultRetentionDays !== undefined || input.statsDigest !== undefined || input.statsSpike !== undefined,
    { message: 'defaultRetentionDays, statsDigest or statsSpike is required' },
  )
  .meta({ id: 'UpdatePartnerSettingsInput' });
export type UpdatePartnerSettingsInput = z.input<typeof UpdatePartnerSettingsInput>;
