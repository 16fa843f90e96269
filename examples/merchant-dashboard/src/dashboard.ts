// What the page shows, read with the SDK on the server (the API key never reaches the browser).
import type { PartnerClient, StatsBreakdown, StatsSummary, StatsTimeseries } from '@partner/sdk';

export interface Dashboard {
  merchant: { merchantId: string; name: string };
  summary: StatsSummary;
  daily: StatsTimeseries;
  pages: StatsBreakdown;
  referrers: StatsBreakdown;
  sources: StatsBreakdown;
}

/** `YYYY-MM-DD` of `date` in `timezone`. */
function localDate(date: Date, timezone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(date);
}

/** The `days` local dates ending today, as the stats calls take them. */
export function lastDays(days: number, timezone: string, now = new Date()): { startDate: string; endDate: string } {
  const endDate = localDate(now, timezone);
  const start = new Date(`${endDate}T00:00:00Z`);
  start.setUTCDate(start.getUTCDate() - (days - 1));
  return { startDate: start.toISOString().slice(0, 10), endDate };
}

/** The merchant's last 30 days: totals against the 30 before, one point a day, top pages and sources. */
export async function loadDashboard(client: PartnerClient, merchantId: string, timezone: string): Promise<Dashboard> {
  const range = { merchantId, timezone, ...lastDays(30, timezone) };
  const top = (dimension: 'path' | 'referrer' | 'utm_source') =>
    client.stats.breakdown({ ...range, dimension, limit: 10 });
  const [merchant, summary, daily, pages, referrers, sources] = await Promise.all([
    client.merchants.retrieve(merchantId),
    client.stats.summary({ ...range, compare: 'previous' }),
    client.stats.timeseries({ ...range, interval: 'day' }),
    top('path'),
    top('referrer'),
    top('utm_source'),
  ]);
  return { merchant: { merchantId, name: merchant.name }, summary, daily, pages, referrers, sources };
}
