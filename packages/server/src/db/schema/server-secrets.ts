import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Secrets the server makes once and shares across its processes (the cursor signing key). */
export const serverSecrets = pgTable('server_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});
