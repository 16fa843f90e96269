import type { TagCheck } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { merchants } from './merchants.js';
import { partners } from './partners.js';

export const tagStatus = pgEnum('tag_status', ['active', 'inactive', 'waiting_for_events']);
export const domainType = pgEnum('domain_type', ['preverified', 'custom']);
/** Migration 0024 (docs/decisions/consent.md). */
export const tagConsentMode = pgEnum('tag_consent_mode', ['none', 'opt-in', 'opt-out']);

export const tags = pgTable(
  'tags',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The merchant's partner (migration 0015): the tag monitor takes partners in turn, the cap counts by it. */
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
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
    /** A custom tag's own CNAME target is `<targetLabel>.<TAG_TARGET_HOST>`; null: TAG_TARGET_HOST itself (older tags). */
    targetLabel: text('target_label'),
    /** When the tag monitor checks the record next (null: not scheduled). */
    nextCheckAt: timestamp('next_check_at', { withTimezone: true, precision: 3 }),
    /** The claim of a check in progress (jobs/tag-monitor.ts); expires at checkLeaseUntil. */
    checkLease: uuid('check_lease'),
    checkLeaseUntil: timestamp('check_lease_until', { withTimezone: true, precision: 3 }),
    /** Unverified tags: position in TAG_RECHECK_SCHEDULE, and when re-checks stop. */
    recheckAttempt: integer('recheck_attempt').notNull().default(0),
    recheckUntil: timestamp('recheck_until', { withTimezone: true, precision: 3 }),
    /** The last DNS check (verify or monitor). */
    lastCheck: jsonb('last_check').$type<TagCheck>(),
    /** What the tag script and the collector ask before a cookie (migration 0024; docs/decisions/consent.md). */
    consentMode: tagConsentMode('consent_mode').notNull().default('none'),
    /** `navigator.globalPrivacyControl` (and `Sec-GPC: 1`) count as a denial. */
    respectGpc: boolean('respect_gpc').notNull().default(true),
    /** Without consent, events are still collected under a daily-rotating hash instead of the cookie. */
    cookieless: boolean('cookieless').notNull().default(false),
  },
  (t) => [
    // One tag per merchant and domain type (spec section 3): concurrent generate calls meet here.
    uniqueIndex('tags_merchant_domain_type_key').on(t.merchantId, t.domainType),
    index('tags_domain_idx').on(t.domain),
    uniqueIndex('tags_target_label_key').on(t.targetLabel),
    index('tags_next_check_at_idx').on(t.nextCheckAt).where(sql`${t.nextCheckAt} is not null`),
    // Migration 0015: each partner's custom tags in due order (the monitor's claim, the custom-tag cap).
    index('tags_partner_custom_due_idx').on(t.partnerId, t.nextCheckAt, t.id).where(sql`${t.domainType} = 'custom'`),
  ],
);

export type TagRow = typeof tags.$inferSelect;
