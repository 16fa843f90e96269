import type { Erasure } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';

const ISO = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/** The columns of `erasures` as the API shows an erasure (select them from `erasures`). */
export const ERASURE_COLUMNS = sql`id::text as id, muid, merchant_id::text as "merchantId", suppress, status,
  events_deleted::float8 as "eventsDeleted", to_char(created_at at time zone 'UTC', ${ISO}) as "createdAt",
  to_char(completed_at at time zone 'UTC', ${ISO}) as "completedAt"`;

/** A row read with ERASURE_COLUMNS, as the API answers it. */
export function toErasure(row: Record<string, unknown>): Erasure {
  return {
    id: row.id as string,
    muid: row.muid as string,
    merchantId: (row.merchantId as string | null) ?? null,
    suppress: row.suppress === true,
    status: row.status as Erasure['status'],
    eventsDeleted: Number(row.eventsDeleted ?? 0),
    createdAt: row.createdAt as string,
    completedAt: (row.completedAt as string | null) ?? null,
  };
}
