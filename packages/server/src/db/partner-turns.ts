import { type SQL, sql } from 'drizzle-orm';

/** What a claim needs to share a process's slots of a background queue between partners. */
export interface PartnerShare {
  /** The slots this process runs at once. */
  slots: number;
  /** Slots one partner may hold at most. */
  perPartner: number;
  /** Slots this process holds now, per partner. */
  held: Map<string, number>;
}

/** A share no claim reaches: without fairness no share is cut (a concurrent claimer still finds rows past the locked ones). */
const UNBOUNDED = 1_000_000_000;
const NO_SHARE: PartnerShare = { slots: UNBOUNDED, perPartner: UNBOUNDED, held: new Map() };

/** The CTEs `held`, `share`, `ranked` and `turns` that make partners take turns in a claim. */
export function partnerTurns(due: 'next_check_at' | 'next_attempt_at', fairness: PartnerShare = NO_SHARE): SQL {
  const heldIds = `{${[...fairness.held.keys()].join(',')}}`;
  const heldCounts = `{${[...fairness.held.values()].join(',')}}`;
  const column = sql.raw(due);
  return sql`held(partner_id, n) as (
      select * from unnest(${heldIds}::uuid[], ${heldCounts}::int[])
    ), share as (
      select least(${fairness.perPartner}::int, ceil(${fairness.slots}::numeric / greatest(1, count(*)))::int) as n
      from (select partner_id from candidates union select partner_id from held) active
    ), ranked as (
      select c.id, c.${column},
        row_number() over (partition by c.partner_id order by c.${column}, c.id)
          + coalesce((select h.n from held h where h.partner_id = c.partner_id), 0) as turn
      from candidates c
    ), turns as (
      select array(
        select r.id from ranked r where r.turn <= (select n from share) order by r.turn, r.${column}, r.id
      ) as ids
    )`;
}
