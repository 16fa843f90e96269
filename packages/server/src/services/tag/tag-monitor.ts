import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import type { DnsResolver } from '../../dns/resolver.js';
import { rowsOf } from '../webhooks/outbox.js';
import { checkTagRecord } from './dns-check.js';
import { applyCheck, type TagStateConfig } from './tag-state.js';

/** A due check this process claimed: the tag's record and the claim's token. */
export interface ClaimedCheck {
  tagId: string;
  recordName: string;
  domain: string;
  targetLabel: string | null;
  lease: string;
}

/**
 * Claims up to `limit` due checks (custom tags whose `next_check_at` has passed and that no live
 * claim holds) in one short statement: the rows are picked `FOR UPDATE SKIP LOCKED` (several
 * processes never pick the same row) and stamped with a fresh lease token valid for `leaseMs`. No
 * row stays locked while DNS is asked; a claim whose process died expires and is taken again.
 */
export async function claimDueChecks(db: Database, limit: number, leaseMs: number): Promise<ClaimedCheck[]> {
  const result = await db.execute(sql`
    update tags set check_lease = gen_random_uuid(),
      check_lease_until = now() + ${leaseMs}::int * interval '1 millisecond'
    where id in (
      select id from tags
      where next_check_at <= now() and domain_type = 'custom'
        and (check_lease_until is null or check_lease_until < now())
      order by next_check_at
      limit ${limit}::int
      for update skip locked
    )
    returning id::text as "tagId", record_name as "recordName", domain, target_label as "targetLabel",
      check_lease::text as lease`);
  return rowsOf<ClaimedCheck>(result);
}

/**
 * Runs one claimed check and applies it (services/tag/tag-state.ts). Returns its outcome: `ok`,
 * the failure reason, or `overtaken` when a verify call changed the tag meanwhile (result dropped).
 */
export async function runClaimedCheck(
  db: Database,
  dns: DnsResolver,
  config: TagStateConfig,
  claim: ClaimedCheck,
): Promise<string> {
  const check = await checkTagRecord(dns, claim, config.tagTargetHost);
  const applied = await applyCheck(db, config, claim.tagId, check, { kind: 'monitor', lease: claim.lease });
  if (!applied) return 'overtaken';
  return check.ok ? 'ok' : (check.reason ?? 'failed');
}
