import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { partners } from './partners.js';

/** A partner's webhook endpoint (migration 0006_webhooks). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    /** Event types this endpoint receives; null: every type. */
    events: text('events').array(),
    description: text('description'),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index('webhook_endpoints_partner_created_idx')
      .on(t.partnerId, t.createdAt, t.id)
      .where(sql`${t.deletedAt} IS NULL`),
  ],
);

/** The outbox: one row per event, written in the same transaction as the change it reports. */
export const webhookMessages = pgTable(
  'webhook_messages',
  {
    /** Also the `webhook-id` header: the same on every attempt. */
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('webhook_messages_partner_created_idx').on(t.partnerId, t.createdAt),
    // Retention's (migration 0014): the oldest messages first.
    index('webhook_messages_created_idx').on(t.createdAt),
  ],
);

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One message to one endpoint. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    messageId: uuid('message_id')
      .notNull()
      .references(() => webhookMessages.id, { onDelete: 'cascade' }),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    status: text('status').$type<WebhookDeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    /** Null once the delivery succeeded or failed for good. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).defaultNow(),
    /** The lease of the process sending it (microsecond precision: also the claim's fencing token). */
    claimedUntil: timestamp('claimed_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_endpoint_message_key').on(t.endpointId, t.messageId),
    index('webhook_deliveries_endpoint_created_idx').on(t.endpointId, t.createdAt, t.id),
    // A message's deliveries (migration 0014): retention, and the cascade when a message is deleted.
    index('webhook_deliveries_message_idx').on(t.messageId),
    // The claim's (migration 0013): each endpoint's pending deliveries in due order.
    index('webhook_deliveries_endpoint_due_idx')
      .on(t.endpointId, t.nextAttemptAt, t.id)
      .where(sql`${t.status} = 'pending'`),
    check('webhook_deliveries_status_check', sql`${t.status} IN ('pending', 'succeeded', 'failed')`),
  ],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookMessageRow = typeof webhookMessages.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
