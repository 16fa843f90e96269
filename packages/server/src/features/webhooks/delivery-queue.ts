import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { type PartnerShare, partnerTurns } from '../../db/partner-turns.js';
import { rowsOf } from '../../db/read-rows.js';

/** A delivery claimed by this process: everything one attempt needs. */
export interface ClaimedDelivery {
  deliveryId: string;
  /** The lease this claim holds (the claim's fencing token: completion only counts while it is ours). */
  lease: string;
  attempts: number;
  endpointId: string;
  /** The endpoint's partner: the worker's share per partner counts by it. */
  partnerId: string;
  url: string;
  /** Signing secrets: the current one, and the previous one while it is still valid. */
  secrets: string[];
  messageId: string;
  /** The request body `{ type, timestamp, livemode, data }`, the same on every attempt. */
  body: string;
}

interface ClaimRow {
  delivery_id: string;
  lease: string;
  attempts: number;
  endpoint_id: string;
  partner_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  message_id: string;
  type: string;
  created_at: string;
  livemode: boolean;
  data: string;
}

const ISO = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/**
 * Claims up to `limit` due deliveries for this process: FOR UPDATE SKIP LOCKED (concurrent
 * claimers take different rows without waiting) and a lease (`claimed_until`) so a delivery is in
 * flight in one process at a time; a process that dies mid-send leaves a lease that simply runs
 * out, and the delivery is claimed again. At most `perEndpoint` rows of one endpoint per claim
 * (one of an endpoint in `probing`), and none of the endpoints in `skipEndpoints` (already at their
 * limit here, or backing off): one slow endpoint never fills the process's slots. Partners take
 * turns (`fairness`): each partner's oldest due first, one partner's rows after another's.
 */
export async function claimDueDeliveries(db: Database, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) return [];
  const result = await db.execute(claimStatement(options));
  return rowsOf<ClaimRow>(result).map((row) => ({
    deliveryId: row.delivery_id,
    lease: row.lease,
    attempts: Number(row.attempts),
    endpointId: row.endpoint_id,
    partnerId: row.partner_id,
    url: row.url,
    secrets: row.previous_secret ? [row.secret, row.previous_secret] : [row.secret],
    messageId: row.message_id,
    // livemode: the endpoint's partner's mode (a test-mode twin's endpoints get test events only).
    body: `{"type":${JSON.stringify(row.type)},"timestamp":${JSON.stringify(row.created_at)},"livemode":${row.livemode === true},"data":${row.data}}`,
  }));
}

export interface ClaimOptions {
  limit: number;
  perEndpoint: number;
  leaseMs: number;
  skipEndpoints: string[];
  probing?: string[];
  /** Sharing the process's slots between partners; without it, one partner may take every slot. */
  fairness?: PartnerShare;
}

/**
 * The claim's statement (exported for the tests that read its plan). Fairness between partners
 * (docs/decisions/fairness-between-partners.md): each candidate gets a turn, its rank among its partner's
 * candidates (oldest due first) plus the claims that partner already holds here; candidates are
 * taken by turn, then due time, so partners alternate and the one holding most waits. A partner's
 * share is min(perPartner, ceil(slots / partners with candidates or claims held)): a partner past
 * it gets nothing until its claims end. That costs a window over the candidates, which are few. What it reads is bounded by
 * the endpoints with pending deliveries, not by the due rows (a dead endpoint's backlog grows
 * without bound): on the partial index `(endpoint_id, next_attempt_at, id) WHERE status =
 * 'pending'` (migration 0013), `pending_endpoints` walks the distinct endpoint ids (a loose index
 * scan: one index descent per endpoint); for each live one not skipped, the lateral reads its
 * oldest due rows in index order until it has its limit, passing over rows under another process's
 * live lease (at most that endpoint's deliveries in flight); the oldest `limit` of those candidates
 * are locked (SKIP LOCKED) and leased. Three choices keep that plan on PostgreSQL 15 and on PGlite
 * (which never has statistics: no autovacuum runs there), each seen otherwise in EXPLAIN: the
 * endpoint check is a subquery per endpoint id (a join was hashed against every live endpoint), the
 * candidates reach the locking scan as an array (`id = any(...)`, primary-key lookups; a join was
 * hashed against every delivery), and that scan leaves `status = 'pending'` to the update (with it,
 * PGlite's PostgreSQL 18 read the whole partial index through a skip scan on `id`).
 */
export function claimStatement(options: ClaimOptions): SQL {
  const skip = `{${options.skipEndpoints.join(',')}}`;
  const probing = `{${(options.probing ?? []).join(',')}}`;
  return sql`
    with recursive pending_endpoints(endpoint_id) as (
      (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' order by d.endpoint_id limit 1)
      union all
      select (select d.endpoint_id from webhook_deliveries d
              where d.status = 'pending' and d.endpoint_id > p.endpoint_id
              order by d.endpoint_id limit 1)
      from pending_endpoints p where p.endpoint_id is not null
    ), live_endpoints as (
      select p.endpoint_id,
        (select e.partner_id from webhook_endpoints e where e.id = p.endpoint_id and e.deleted_at is null) as partner_id
      from pending_endpoints p
      where p.endpoint_id is not null and p.endpoint_id <> all(${skip}::uuid[])
    ), candidates as (
      select c.id, c.next_attempt_at, l.partner_id
      from live_endpoints l
      cross join lateral (
        select d.id, d.next_attempt_at from webhook_deliveries d
        where d.endpoint_id = l.endpoint_id and d.status = 'pending' and d.next_attempt_at <= now()
          and (d.claimed_until is null or d.claimed_until <= now())
        order by d.next_attempt_at, d.id
        limit case when l.endpoint_id = any(${probing}::uuid[]) then 1 else ${options.perEndpoint} end
      ) c
      where l.partner_id is not null
    ), ${partnerTurns('next_attempt_at', options.fairness)}, picked as (
      select d.id from webhook_deliveries d
      where d.id = any((select ids from turns)::uuid[])
        and (d.claimed_until is null or d.claimed_until <= now())
      order by array_position((select ids from turns), d.id)
      limit ${options.limit}
      for update of d skip locked
    )
    update webhook_deliveries d
    set claimed_until = clock_timestamp() + ${options.leaseMs} * interval '1 millisecond'
    from picked, webhook_messages m, webhook_endpoints e, partners pt
    where d.id = picked.id and m.id = d.message_id and e.id = d.endpoint_id and pt.id = e.partner_id
      and d.status = 'pending' and (d.claimed_until is null or d.claimed_until <= now())
    returning d.id as delivery_id, d.claimed_until::text as lease, d.attempts, d.endpoint_id, e.partner_id, e.url,
      e.secret, case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret,
      m.id as message_id, m.type, to_char(m.created_at at time zone 'UTC', ${ISO}) as created_at, pt.livemode,
      m.data::text as data`;
}

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** What an attempt makes of its delivery: `succeeded`, `pending` (another attempt is scheduled) or `failed` (none left). */
export function attemptStatus(
  claim: Pick<ClaimedDelivery, 'attempts'>,
  outcome: Pick<AttemptOutcome, 'ok'>,
  schedule: number[],
): 'succeeded' | 'pending' | 'failed' {
  if (outcome.ok) return 'succeeded';
  return schedule[claim.attempts] === undefined ? 'failed' : 'pending';
}

/**
 * Records an attempt of a claimed delivery: `succeeded`, or `pending` with the next attempt after
 * `schedule[attempts - 1]`, or `failed` once the schedule is used up. Only while the lease is still
 * this claim's (a claim whose lease ran out and was taken over records nothing). Returns whether
 * it was recorded.
 */
export async function recordAttempt(
  db: Database,
  claim: Pick<ClaimedDelivery, 'deliveryId' | 'lease' | 'attempts'>,
  outcome: AttemptOutcome,
  schedule: number[],
): Promise<boolean> {
  const attempts = claim.attempts + 1;
  const delayMs = outcome.ok ? null : (schedule[attempts - 1] ?? null);
  const status = attemptStatus(claim, outcome, schedule);
  const result = await db.execute(sql`
    update webhook_deliveries set
      status = ${status},
      attempts = attempts + 1,
      last_status_code = ${outcome.statusCode},
      last_error = ${outcome.error},
      next_attempt_at = ${delayMs === null ? null : sql`now() + ${delayMs} * interval '1 millisecond'`},
      claimed_until = null,
      updated_at = now()
    where id = ${claim.deliveryId}::uuid and claimed_until = ${claim.lease}::timestamptz
    returning id`);
  return rowsOf(result).length === 1;
}

/** Gives claims back unsent (on shutdown): due again at once for any process. */
export async function releaseClaims(db: Database, claims: Array<Pick<ClaimedDelivery, 'deliveryId' | 'lease'>>) {
  for (const claim of claims) {
    await db.execute(sql`
      update webhook_deliveries set claimed_until = null
      where id = ${claim.deliveryId}::uuid and claimed_until = ${claim.lease}::timestamptz`);
  }
}
