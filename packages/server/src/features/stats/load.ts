import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import type { OutboxRange } from './transfer.js';

/** Events read from PostgreSQL per range: one ClickHouse insert each. */
const CHUNK = 50_000;

export interface LoadProgress {
  merchants: number;
  ranges: number;
  /** Events already there or sent now. */
  events: number;
}

/**
 * Loads the events stored in PostgreSQL into the statistics, merchant by merchant in seq ranges of
 * CHUNK: each range ends with ClickHouse holding exactly PostgreSQL's events of it (already there:
 * skipped; none or some: sent), so a load cut anywhere is resumed by running it again, beside
 * live ingestion. Events stored after it starts come through the outbox.
 */
export async function loadStoredEvents(
  db: Database,
  store: { loadRange(range: OutboxRange): Promise<void> },
  options: { signal?: AbortSignal; onProgress?: (progress: LoadProgress) => void } = {},
): Promise<LoadProgress> {
  const [row] = rowsOf<{ horizon: string }>(await db.execute(sql`select events_horizon_seq()::text as horizon`));
  const horizon = Number(row?.horizon);
  const merchants = rowsOf<{ id: string }>(
    await db.execute(sql`select id::text from merchants where deleted_at is null order by id`),
  );
  const progress: LoadProgress = { merchants: 0, ranges: 0, events: 0 };
  for (const { id } of merchants) {
    let after = -1;
    for (;;) {
      if (options.signal?.aborted) return progress;
      const [bounds] = rowsOf<{ first: string | null; last: string | null; n: number }>(
        await db.execute(sql`select min(seq)::text as first, max(seq)::text as last, count(*)::int as n
          from (select seq from events where merchant_id = ${id}::uuid and seq > ${after} and seq < ${horizon}
            order by seq limit ${CHUNK}) r`),
      );
      if (!bounds?.first || !bounds.last) break;
      const range = { merchantId: id, firstSeq: Number(bounds.first), lastSeq: Number(bounds.last) };
      await store.loadRange(range);
      progress.ranges += 1;
      progress.events += bounds.n;
      options.onProgress?.(progress);
      after = range.lastSeq;
    }
    progress.merchants += 1;
  }
  return progress;
}
