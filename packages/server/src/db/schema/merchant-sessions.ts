import { index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { apiKeys } from './api-keys.js';
import { merchants } from './merchants.js';
import { partners } from './partners.js';

/** Merchant sessions: short-lived tokens a browser may hold to read one merchant's statistics and tag status. */
export const merchantSessions = pgTable(
  'merchant_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    merchantId: uuid('merchant_id')
      .notNull()
      .references(() => merchants.id, { onDelete: 'cascade' }),
    keyId: uuid('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    /** Exact origins (`https://host[:port]`) whose pages get CORS headers for this token. */
    allowedOrigins: text('allowed_origins').array().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex('merchant_sessions_token_hash_key').on(t.tokenHash),
    // Expired sessions are purged per partner when it creates one.
    index('merchant_sessions_partner_expires_idx').on(t.partnerId, t.expiresAt),
    // Deleting a merchant or a key cascades here.
    index('merchant_sessions_merchant_id_idx').on(t.merchantId),
    index('merchant_sessions_key_id_idx').on(t.keyId),
  ],
);

export type MerchantSessionRow = typeof merchantSessions.$inferSelect;
