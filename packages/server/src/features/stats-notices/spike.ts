import { STATS_SPIKE_MIN_VISITORS, type WebhookStatsSpikeData } from '@partner/shared-schemas';
import { type StatsDeps, statsVisitorsByHour } from '../stats/visitors-by-hour.js';
import type { NoticeMerchant } from './notice-merchant.js';
import { readerOf } from './notice-merchant.js';

const HOUR = 3_600_000;
const WEEK = 7 * 24 * HOUR;
/** The hour just ended is looked at this long after its end (its events stored and transferred). */
const SPIKE_SETTLE_MS = 2 * 60_000;

/** The last whole UTC hour settled at `now` (its start, ms). */
export function lastWholeHour(now: number): number {
  return Math.floor((now - SPIKE_SETTLE_MS) / HOUR) * HOUR - HOUR;
}

/** The median of a few counts (the mean of the middle two when even). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** An hour's visitors against the same hour of the four weeks before (one read of five hours). */
export async function measureSpike(
  deps: StatsDeps,
  merchant: NoticeMerchant,
  hourStart: number,
  multiple: number,
): Promise<WebhookStatsSpikeData> {
  const partner = readerOf(merchant);
  const hours = [0, 1, 2, 3, 4].map((weeks) => hourStart - weeks * WEEK);
  const counts = await statsVisitorsByHour(deps, partner, { merchantId: merchant.merchantId, hours });
  const previousWeeks = hours.slice(1).map((hour) => counts.get(hour) ?? 0);
  return {
    merchantId: merchant.merchantId,
    timezone: merchant.timezone,
    hour: { start: new Date(hourStart).toISOString(), end: new Date(hourStart + HOUR).toISOString() },
    visitors: counts.get(hourStart) ?? 0,
    median: median(previousWeeks),
    previousWeeks,
    multiple,
  };
}

/** A spike: at least `multiple` x the median, and at least STATS_SPIKE_MIN_VISITORS visitors. */
export function isSpike(data: WebhookStatsSpikeData): boolean {
  return data.visitors >= STATS_SPIKE_MIN_VISITORS && data.visitors >= data.multiple * data.median;
}
