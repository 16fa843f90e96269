import { z } from 'zod';
import { Timestamp, Uuid } from './common.js';
import { StatsBreakdownResponse, StatsSummaryResponse } from './stats.js';

/** The least `statsSpike.multiple` (a spike is at least this many times the usual visitors). */
export const STATS_SPIKE_MULTIPLE_MIN = 1.5;
export const STATS_SPIKE_MULTIPLE_MAX = 100;
export const STATS_SPIKE_MULTIPLE_DEFAULT = 3;
/** A spike needs at least this many visitors in its hour, whatever the weeks before (no spike of 3 visitors). */
export const STATS_SPIKE_MIN_VISITORS = 10;
/** Rows of the digest's top pages and channels. */
export const STATS_DIGEST_TOP = 10;

/** The partner's switches of the statistics' webhooks (`GET /v1/partners/settings`). */
export const StatsSpikeSettings = z
  .object({
    enabled: z.boolean().meta({ description: '`stats.spike` webhooks on.', example: true }),
    multiple: z.number().meta({
      description: `A spike: an hour's visitors at least this many times the median of that hour in the four weeks before (default ${STATS_SPIKE_MULTIPLE_DEFAULT}, at least ${STATS_SPIKE_MULTIPLE_MIN}).`,
      example: 3,
    }),
  })
  .meta({ id: 'StatsSpikeSettings' });
export type StatsSpikeSettings = z.infer<typeof StatsSpikeSettings>;

export const StatsDigestSetting = z.boolean().meta({
  description: "`stats.digest` webhooks on: each merchant's week, sent Monday 06:00 in the merchant's `timezone`.",
  example: true,
});

/** Request bodies: pipes, so REST does not coerce `"true"` or `"3"` (trpc-to-openapi coerces bare ones). */
export const StatsSpikeSettingsInput = z
  .object({
    enabled: z
      .boolean({ message: 'must be a boolean' })
      .transform((value) => value)
      .optional(),
    multiple: z
      .number({ message: 'must be a number' })
      .min(STATS_SPIKE_MULTIPLE_MIN, { message: `must be at least ${STATS_SPIKE_MULTIPLE_MIN}` })
      .max(STATS_SPIKE_MULTIPLE_MAX, { message: `must be at most ${STATS_SPIKE_MULTIPLE_MAX}` })
      .transform((value) => value)
      .optional(),
  })
  .meta({ description: 'The fields given change.', example: { enabled: true, multiple: 3 } });

export const StatsDigestSettingInput = z
  .boolean({ message: 'must be a boolean' })
  .transform((value) => value)
  .meta({ description: '`stats.digest` webhooks on or off.', example: true });

const DateRange = z.object({
  startDate: z.string().meta({ description: 'Monday, a local date in `timezone`.', example: '2026-11-30' }),
  endDate: z.string().meta({ description: 'Sunday, inclusive.', example: '2026-12-06' }),
});

/** A breakdown of the week and of the week before, each as `GET /v1/partners/stats/breakdown` answers it. */
const WeekBreakdowns = z.object({
  current: StatsBreakdownResponse,
  previous: StatsBreakdownResponse,
});

/** The `data` of `stats.digest`: a merchant's week, each part exactly as the stats API answers it. */
export const WebhookStatsDigestData = z
  .object({
    merchantId: Uuid,
    timezone: z.string().meta({ description: "The merchant's zone: the week's days are its.", example: 'UTC' }),
    week: DateRange,
    summary: StatsSummaryResponse.meta({
      description:
        '`GET /v1/partners/stats/summary` of the week with `compare=previous`: totals, goals and the week before.',
    }),
    topPages: WeekBreakdowns.meta({
      description: `The week's and the week before's top ${STATS_DIGEST_TOP} pages (breakdown by \`path\`).`,
    }),
    channels: WeekBreakdowns.meta({
      description: `The week's and the week before's top ${STATS_DIGEST_TOP} channels (breakdown by \`channel\`).`,
    }),
  })
  .meta({ id: 'WebhookStatsDigestData' });
export type WebhookStatsDigestData = z.infer<typeof WebhookStatsDigestData>;

/** The `data` of `stats.spike`. */
export const WebhookStatsSpikeData = z
  .object({
    merchantId: Uuid,
    timezone: z
      .string()
      .meta({ description: "The merchant's zone (its day: at most one spike a day).", example: 'UTC' }),
    hour: z.object({
      start: Timestamp.meta({ description: 'The clock hour counted, from (UTC, a whole hour).' }),
      end: Timestamp.meta({ description: 'To (exclusive).' }),
    }),
    visitors: z.number().int().meta({ description: 'Visitors in the hour.', example: 120 }),
    median: z.number().meta({
      description: 'The median of the same hour one to four weeks before (the mean of the middle two).',
      example: 20,
    }),
    previousWeeks: z.array(z.number().int()).meta({
      description: 'Visitors of the same hour 1, 2, 3 and 4 weeks before, in that order.',
      example: [18, 22, 19, 25],
    }),
    multiple: z.number().meta({ description: "The partner's `statsSpike.multiple` when it was sent.", example: 3 }),
  })
  .meta({ id: 'WebhookStatsSpikeData' });
export type WebhookStatsSpikeData = z.infer<typeof WebhookStatsSpikeData>;

/** The statistics' webhooks test mode can send now (`POST /v1/partners/test/merchants/{merchantId}/trigger`). */
export const TRIGGERABLE_STATS_EVENTS = ['stats.digest', 'stats.spike'] as const;
export const TriggerableStatsEvent = z.enum(TRIGGERABLE_STATS_EVENTS).meta({
  id: 'TriggerableStatsEvent',
  description:
    "`stats.digest`: the merchant's last whole week (Monday to Sunday in its zone), now; `stats.spike`: the last " +
    'whole hour against the same hour of the four weeks before, sent whatever the ratio.',
  example: 'stats.digest',
});
export type TriggerableStatsEvent = z.infer<typeof TriggerableStatsEvent>;

export const TriggerStatsInput = z
  .object({
    merchantId: Uuid.meta({
      description: 'The test-mode merchant (UUID).',
      example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
    }),
    event: TriggerableStatsEvent,
  })
  .meta({ id: 'TriggerStatsInput' });
export type TriggerStatsInput = z.input<typeof TriggerStatsInput>;

export const TriggerStatsResponse = z
  .object({
    type: TriggerableStatsEvent,
    messageId: Uuid.meta({ description: 'The webhook message (one delivery per subscribed test-mode endpoint).' }),
    deliveries: z.number().int().meta({ description: 'Deliveries created.', example: 1 }),
    data: z.union([WebhookStatsDigestData, WebhookStatsSpikeData]).meta({ description: "The webhook's `data`." }),
  })
  .meta({
    id: 'TriggerStatsResponse',
    example: {
      type: 'stats.spike',
      messageId: '9b2d7c1a-4e5f-4a6b-8c7d-0e1f2a3b4c5d',
      deliveries: 1,
      data: {
        merchantId: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
        timezone: 'Europe/Paris',
        hour: { start: '2026-11-30T10:00:00.000Z', end: '2026-11-30T11:00:00.000Z' },
        visitors: 120,
        median: 20.5,
        previousWeeks: [18, 22, 19, 25],
        multiple: 3,
      },
    },
  });
export type TriggerStatsResponse = z.infer<typeof TriggerStatsResponse>;
