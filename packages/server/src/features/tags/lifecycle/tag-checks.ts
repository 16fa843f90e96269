import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { type PartnerShare, partnerTurns } from '../../../db/partner-turns.js';
import { rowsOf } from '../../../db/read-rows.js';
import type { DnsResolver } from '../../../runtime/dns-resolver.js';
import { checkTagRecord } from '../dns-check.js';
import { simulatedResolver } from '../simulated-dns.js';
import { applyCheck, type TagStateConfig } from './tag-state.js';

/** A due check this process claimed: the tag's record, its partner and the claim's token. */
export interface ClaimedCheck {
  tagId: string;
  partnerId: string;
  recordName: string;
  domain: string;
  targetLabel: string | null;
  /** False for a test-mode tag: its check asks no DNS (features/tags/simulated-dns.ts). */
  livemode: boolean;
  lease: string;
}

/** Claims up to `limit` due checks in one short statement. */
export async function claimDueChecks(
  db: Database,
  limit: number,
  leaseMs: number,
  fairness?: PartnerShare,
): Promise<ClaimedCheck[]> {
  return rowsOf<ClaimedCheck>(await db.execute(claimChecksStatement(limit, leaseMs, fairness)));
}

/** The claim's statement (exported for the test that reads its plan). */
export function claimChecksStatement(limit: number, leaseMs: number, fairness?: PartnerShare): SQL {
  return sql`
    with recursive partners_with_tags(partner_id) as (
      (select t.partner_id from tags t where t.domain_type = 'custom' order by t.partner_id limit 1)
      union all
      select (select t.partner_id from tags t
              where t.domain_type = 'custom' and t.partner_id > p.partner_id
              order by t.partner_id limit 1)
      from partners_with_tags p where p.partner_id is not null
    ), candidates as (
      select c.id, c.next_check_at, p.partner_id
      from partners_with_tags p
      cross join lateral (
        select t.id, t.next_check_at from tags t
        where t.partner_id = p.partner_id and t.domain_type = 'custom' and t.next_check_at <= now()
          and (t.check_lease_until is null or t.check_lease_until < now())
        order by t.next_check_at, t.id
        limit ${limit}::int
      ) c
      where p.partner_id is not null
    ), ${partnerTurns('next_check_at', fairness)}
    update tags set check_lease = gen_random_uuid(),
      check_lease_until = now() + ${leaseMs}::int * interval '1 millisecond'
    where id in (
      select t.id from tags t
      where t.id = any((select ids from turns)::uuid[])
        and (t.check_lease_until is null or t.check_lease_until < now())
      order by array_position((select ids from turns), t.id)
      limit ${limit}::int
      for update skip locked
    )
    returning id::text as "tagId", partner_id::text as "partnerId", record_name as "recordName", domain,
      target_label as "targetLabel", check_lease::text as lease,
      (select p.livemode from partners p where p.id = tags.partner_id) as livemode`;
}

/** Moves the due checks of every custom tag on `domain` to `until` at the earliest. */
export async function postponeDomainChecks(db: Database, domain: string, until: Date): Promise<void> {
  await db.execute(sql`
    update tags set next_check_at = ${until.toISOString()}::timestamptz
    where domain = ${domain} and domain_type = 'custom' and next_check_at < ${until.toISOString()}::timestamptz
      and (check_lease_until is null or check_lease_until < now())`);
}

/** Runs one claimed check and applies it (features/tags/lifecycle/tag-state.ts). */
export async function runClaimedCheck(
  db: Database,
  dns: DnsResolver,
  config: TagStateConfig,
  claim: ClaimedCheck,
): Promise<string> {
  const resolver = claim.livemode ? dns : simulatedResolver(claim, config.tagTargetHost, dns.timeoutMs);
  const check = await checkTagRecord(resolver, claim, config.tagTargetHost);
  const applied = await applyCheck(db, config, claim.tagId, check, { kind: 'monitor', lease: claim.lease });
  if (!applied) return 'overtaken';
  return check.ok ? 'ok' : (check.reason ?? 'failed');
}
