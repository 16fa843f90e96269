import { STATS_DIGEST_TOP, type WebhookStatsDigestData } from '@partner/shared-schemas';
import { statsBreakdown } from '../stats/breakdown.js';
import { statsSummary } from '../stats/summary.js';
import type { StatsDeps } from '../stats/visitors-by-hour.js';
import { addDays, type NoticeMerchant, readerOf } from './notice-merchant.js';

/**
 * A merchant's `stats.digest` of a week (local dates, Monday to Sunday): each part is what the stats
 * API answers for the same question (summary with `compare=previous`; the top pages and channels of
 * the week and of the week before), through the same use cases, so the two never differ.
 */
export async function buildDigest(
  deps: StatsDeps,
  merchant: NoticeMerchant,
  week: { startDate: string; endDate: string },
): Promise<WebhookStatsDigestData> {
  const partner = readerOf(merchant);
  const current = { merchantId: merchant.merchantId, timezone: merchant.timezone, ...week };
  const previous = { ...current, startDate: addDays(week.startDate, -7), endDate: addDays(week.startDate, -1) };
  const top = (range: typeof current, dimension: 'path' | 'channel') =>
    statsBreakdown(deps, partner, { ...range, dimension, limit: STATS_DIGEST_TOP });
  const summary = await statsSummary(deps, partner, { ...current, compare: 'previous' });
  const [pages, pagesBefore, channels, channelsBefore] = await Promise.all([
    top(current, 'path'),
    top(previous, 'path'),
    top(current, 'channel'),
    top(previous, 'channel'),
  ]);
  return {
    merchantId: merchant.merchantId,
    timezone: merchant.timezone,
    week,
    summary,
    topPages: { current: pages, previous: pagesBefore },
    channels: { current: channels, previous: channelsBefore },
  };
}
