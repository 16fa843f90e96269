import { sql } from 'drizzle-orm';
import { type AnyPgColumn, boolean, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** A partner platform, created by onboarding, with its test-mode twin. */
export const partners = pgTable(
  'partners',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    /** The partner's own domain: tags on it or under it are preverified. */
    domain: text('domain').notNull(),
    /** Label of the CNAME the partner published once at onboarding: `<recordName>.<domain>`. */
    recordName: text('record_name').notNull(),
    /** False for the test-mode twin. */
    livemode: boolean('livemode').notNull().default(true),
    /** The twin's live partner (null on live rows). */
    livePartnerId: uuid('live_partner_id').references((): AnyPgColumn => partners.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // One live partner per domain; its twin shares the domain.
    uniqueIndex('partners_domain_key').on(t.domain).where(sql`${t.livemode}`),
    uniqueIndex('partners_live_partner_id_key').on(t.livePartnerId),
  ],
);

export type PartnerRow = typeof partners.$inferSelect;
