import { bigint, pgTable, uuid } from 'drizzle-orm/pg-core';

/**
 * Each merchant's last event `seq` (migration 0008). The ingestion statement bumps the rows of
 * the merchants it writes; that row lock, held to commit, orders one merchant's commits only.
 */
export const eventSeqs = pgTable('event_seqs', {
  merchantId: uuid('merchant_id').primaryKey(),
  lastSeq: bigint('last_seq', { mode: 'number' }).notNull(),
});
