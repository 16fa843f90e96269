import { type SQL, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/read-rows.js';
import type { Env } from '../../kernel/env.js';
import { AppError } from '../../kernel/errors.js';
import type { Transaction } from '../tags/lifecycle/tag-state.js';

/** What one partner may own or do (docs/decisions/fairness-between-partners.md). */
export interface PartnerCaps {
  maxMerchants: number;
  maxCustomTags: number;
  maxWebhookEndpoints: number;
  webhookTestCalls: number;
  webhookTestWindowMs: number;
}

export function partnerCapsOf(env: Env): PartnerCaps {
  return {
    maxMerchants: env.MAX_MERCHANTS_PER_PARTNER,
    maxCustomTags: env.MAX_CUSTOM_TAGS_PER_PARTNER,
    maxWebhookEndpoints: env.MAX_WEBHOOK_ENDPOINTS_PER_PARTNER,
    webhookTestCalls: env.WEBHOOK_TEST_CALLS_PER_PARTNER,
    webhookTestWindowMs: env.knobs.webhookTestWindowMs,
  };
}

/** Serialises the partner's capped creates until the transaction ends. */
export async function lockPartnerCaps(tx: Transaction, partnerId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`partner-caps:${partnerId}`}, 0))`);
}

/**
 * Throws 409 LIMIT_EXCEEDED when `rows` (a select of the partner's rows, one column) has `cap` rows. The count stops
 * at the cap: its cost grows with the partner's rows up to the cap, never beyond.
 */
export async function refuseAtCap(tx: Transaction, name: string, cap: number, rows: SQL): Promise<void> {
  const [row] = rowsOf<{ n: number | string }>(
    await tx.execute(sql`select count(*) as n from (${rows} limit ${cap}) capped`),
  );
  if (Number(row?.n ?? 0) >= cap) {
    throw new AppError('LIMIT_EXCEEDED', `partner has reached ${name} (${cap})`);
  }
}

/** Throws 429 RATE_LIMITED once the partner queued `webhookTestCalls` test events within `webhookTestWindowMs`. */
export async function refuseOverTestBudget(
  tx: Transaction,
  partnerId: string,
  caps: Pick<PartnerCaps, 'webhookTestCalls' | 'webhookTestWindowMs'>,
): Promise<void> {
  const [row] = rowsOf<{ n: number | string; wait_ms: number | string | null }>(
    await tx.execute(sql`
      select count(*) as n,
        ceil(extract(epoch from min(created_at) + ${caps.webhookTestWindowMs} * interval '1 millisecond' - now()) * 1000)
          as wait_ms
      from (
        select created_at from webhook_messages
        where partner_id = ${partnerId}::uuid and type = 'webhook.test'
          and created_at > now() - ${caps.webhookTestWindowMs} * interval '1 millisecond'
        order by created_at desc
        limit ${caps.webhookTestCalls}
      ) recent`),
  );
  if (Number(row?.n ?? 0) < caps.webhookTestCalls) return;
  const seconds = Math.max(1, Math.ceil(Number(row?.wait_ms ?? 1000) / 1000));
  throw new AppError(
    'RATE_LIMITED',
    `partner has reached WEBHOOK_TEST_CALLS_PER_PARTNER (${caps.webhookTestCalls} per ` +
      `${Math.round(caps.webhookTestWindowMs / 1000)} s); retry in ${seconds} s`,
    { headers: { 'retry-after': String(seconds) } },
  );
}
