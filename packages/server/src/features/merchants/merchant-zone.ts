import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { AppError } from '../../kernel/errors.js';

/**
 * A merchant's zone is read by PostgreSQL too (the digest's schedule, `at time zone`): one the
 * runtime knows but the database's time zone data does not is refused with 400 before it is stored,
 * so no stored zone ever fails the digest's statement. `UTC` needs no look.
 */
export async function assertZoneKnown(db: Pick<Database, 'execute'>, zone: string): Promise<void> {
  if (zone === 'UTC') return;
  try {
    await db.execute(sql`select now() at time zone ${zone}`);
  } catch (error) {
    if (/time zone .* not recognized/i.test(String((error as Error)?.message))) {
      throw new AppError('VALIDATION_ERROR', `Invalid request: timezone: ${zone} is not known to the database`);
    }
    throw error;
  }
}
