import { boolean, index, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { merchants } from './merchants.js';

export const tagStatus = pgEnum('tag_status', ['active', 'inactive', 'waiting_for_events']);
export const domainType = pgEnum('domain_type', ['preverified', 'custom']);

export const tags = pgTable(
  'tags',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    merchantId: uuid('merchant_id')
      .notNull()
      .references(() => merchants.id, { onDelete: 'cascade' }),
    domain: text('domain').notNull(),
    domainType: domainType('domain_type').notNull(),
    /** Label of the CNAME record: `<recordName>.<domain>` points at TAG_TARGET_HOST. */
    recordName: text('record_name').notNull(),
    status: tagStatus('status').notNull(),
    isConnected: boolean('is_connected').notNull().default(false),
    isVerified: boolean('is_verified').notNull().default(false),
    verifiedAt: timestamp('verified_at', { withTimezone: true, precision: 3 }),
    firstEventAt: timestamp('first_event_at', { withTimezone: true, precision: 3 }),
    lastEventAt: timestamp('last_event_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // One tag per merchant and domain type (spec section 3): concurrent generate calls meet here.
    uniqueIndex('tags_merchant_domain_type_key').on(t.merchantId, t.domainType),
    index('tags_domain_idx').on(t.domain),
  ],
);

export type TagRow = typeof tags.$inferSelect;
