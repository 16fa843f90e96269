import { index, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { partners } from './partners.js';

/** `Idempotency-Key` records of POST /v1/partners/*. `status` null means the first request is still running. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    /** SHA-256 of method, path and the canonical JSON body. */
    fingerprint: text('fingerprint').notNull(),
    status: integer('status'),
    body: text('body'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.partnerId, t.key] }), index('idempotency_keys_created_at_idx').on(t.createdAt)],
);

export type IdempotencyKeyRow = typeof idempotencyKeys.$inferSelect;
