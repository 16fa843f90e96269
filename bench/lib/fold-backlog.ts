import type postgres from 'postgres';

/** Events stored and not yet folded into the statistics (by their seq spans in `stat_pending`). */
export async function unfoldedEvents(db: postgres.Sql): Promise<number> {
  const [row] = await db`select coalesce(sum(last_seq - first_seq + 1), 0)::float8 as n from stat_pending`;
  return Number(row?.n ?? 0);
}
