import { pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** A partner platform, created by onboarding (`pnpm partner onboard`). */
export const partners = pgTable(
  'partners',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    /** The partner's own domain: tags on it or under it are preverified. */
    domain: text('domain').notNull(),
    /** Label of the CNAME the partner published once at onboarding: `<recordName>.<domain>`. */
    recordName: text('record_name').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('partners_domain_key').on(t.domain)],
);

export type PartnerRow = typeof partners.$inferSelect;
