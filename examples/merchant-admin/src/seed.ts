// Demo data for one new merchant: a preverified tag and a few hundred events over the last days,
// sent to the collector (`POST /v1/collect`, public: on a real site the tag sends them).
import type { PartnerClient } from '@partner/sdk';

const PATHS = ['/', '/', '/', '/shoes', '/shoes', '/shoes/trail-runner', '/bags', '/sale', '/about', '/checkout'];
const REFERRERS = [
  undefined,
  undefined,
  'https://www.google.com/search?q=trail+shoes',
  'https://www.google.com/search?q=running+bag',
  'https://duckduckgo.com/',
  'https://news.ycombinator.com/item?id=1',
  'https://www.instagram.com/',
];
const UTM_SOURCES = [undefined, undefined, undefined, 'newsletter', 'newsletter', 'instagram', 'partner-blog'];
const PRICES = [
  { value: '49.90', currency: 'EUR' },
  { value: '89.00', currency: 'EUR' },
  { value: '129.50', currency: 'EUR' },
  { value: '59.00', currency: 'USD' },
];

/** A small seeded generator (mulberry32): the same demo shape on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface DemoEvent {
  id: string;
  event_name: string;
  event_time: string;
  muid: string;
  data: Record<string, unknown>;
}

/**
 * Visits over the last `days` days (more on recent days) and some 31..50 days back, so the
 * dashboard's previous-period comparison has something to compare with. A visit is page views,
 * sometimes an AddToCart and a Purchase.
 */
function demoEvents(runId: string, shopHost: string, now = Date.now(), days = 10): DemoEvent[] {
  const next = random(20261127);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const events: DemoEvent[] = [];
  const visit = (visitor: number, at: number) => {
    const muid = `demo-${runId}-${visitor}`;
    const referrer = pick(REFERRERS);
    const utm = pick(UTM_SOURCES);
    const pages = 1 + Math.floor(next() * 4);
    let time = at;
    for (let i = 0; i < pages; i++) {
      const path = i === 0 ? pick(PATHS.slice(0, 6)) : pick(PATHS);
      const url = `https://${shopHost}${path}${i === 0 && utm ? `?utm_source=${utm}&utm_medium=email` : ''}`;
      const data: Record<string, unknown> = { path, url };
      if (i === 0 && referrer) data.referrer = referrer;
      events.push({ id: `${runId}-${events.length}`, event_name: 'PageView', event_time: iso(time), muid, data });
      time += 20_000 + Math.floor(next() * 90_000);
    }
    if (next() < 0.3) {
      events.push({ id: `${runId}-${events.length}`, event_name: 'AddToCart', event_time: iso(time), muid, data: {} });
      time += 30_000;
      if (next() < 0.5) {
        events.push({
          id: `${runId}-${events.length}`,
          event_name: 'Purchase',
          event_time: iso(time),
          muid,
          data: pick(PRICES),
        });
      }
    }
  };
  const iso = (ms: number) => new Date(Math.min(ms, now)).toISOString();
  const dayMs = 86_400_000;
  for (let day = days - 1; day >= 0; day--) {
    const visits = 8 + Math.floor((days - day) * 1.5 + next() * 6);
    for (let v = 0; v < visits; v++)
      visit(Math.floor(next() * 150), now - day * dayMs - Math.floor(next() * dayMs * 0.9));
  }
  for (let v = 0; v < 70; v++) visit(Math.floor(next() * 150), now - (31 + Math.floor(next() * 20)) * dayMs);
  return events;
}

/** Creates a merchant and its preverified tag, and sends the demo events; returns the merchant and the count. */
export async function seedMerchant(
  client: PartnerClient,
  partnerDomain: string,
): Promise<{ merchantId: string; name: string; sent: number }> {
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const name = 'Trail & Co';
  const { merchantId } = await client.merchants.create({ name });
  const shopHost = `shop.${partnerDomain}`;
  const tag = await client.tags.generate({ merchantId, domain: shopHost });
  if (tag.status !== 'active') throw new Error(`expected an active preverified tag, got ${tag.status}`);
  const events = demoEvents(runId, shopHost);
  for (let i = 0; i < events.length; i += 200) {
    const res = await fetch(`${client.baseURL}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tagId: tag.tagId, events: events.slice(i, i + 200) }),
    });
    if (res.status !== 202) throw new Error(`POST /v1/collect answered ${res.status}: ${await res.text()}`);
  }
  return { merchantId, name, sent: events.length };
}
