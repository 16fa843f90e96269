/**
 * When stored events are visible in the statistics: the storing process sends them to its
 * ClickHouse and then deletes their `stats_outbox` rows (features/stats/transfer.ts); a stats read
 * then counts them. The ingestion sections' "until visible" clocks.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type postgres from 'postgres';
import { request } from './http.js';

const DAY_MS = 86_400_000;
const ymd = (instant: number) => new Date(instant).toISOString().slice(0, 10);

/** Events stored and not yet sent to the statistics (their outbox ranges), of one merchant or all. */
export async function outboxEvents(db: postgres.Sql, merchantId?: string): Promise<number> {
  const [row] = merchantId
    ? await db`select coalesce(sum(last_seq - first_seq + 1), 0)::float8 as n from stats_outbox
        where merchant_id = ${merchantId}::uuid`
    : await db`select coalesce(sum(last_seq - first_seq + 1), 0)::float8 as n from stats_outbox`;
  return Number(row?.n ?? 0);
}

/** A merchant's events in the statistics of the process at `url`, over the days around now (UTC). */
export async function statsEventCount(url: string, auth: Record<string, string>, merchantId: string): Promise<number> {
  const now = Date.now();
  const q = new URLSearchParams({ merchantId, startDate: ymd(now - 3 * DAY_MS), endDate: ymd(now + DAY_MS) });
  const res = await request(`${url}/v1/partners/stats/summary?${q}`, { headers: auth });
  if (res.status !== 200) throw new Error(`stats summary on ${url}: ${res.status} ${res.body.slice(0, 200)}`);
  return (JSON.parse(res.body) as { totals: { events: number } }).totals.events;
}

/**
 * Waits until the merchant's outbox is empty (every stored event sent), then until the summary of
 * the process at `url` counts `expected` events; throws past `timeoutMs`.
 */
export async function waitVisible(
  db: postgres.Sql,
  url: string,
  auth: Record<string, string>,
  merchantId: string,
  expected: number,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await outboxEvents(db, merchantId)) > 0) {
    if (Date.now() > deadline) throw new Error(`events of ${merchantId} still in stats_outbox after ${timeoutMs} ms`);
    await sleep(10);
  }
  let counted = await statsEventCount(url, auth, merchantId);
  while (counted !== expected) {
    if (Date.now() > deadline || counted > expected) {
      throw new Error(`statistics of ${merchantId} count ${counted} events, expected ${expected}`);
    }
    await sleep(20);
    counted = await statsEventCount(url, auth, merchantId);
  }
}
