import { asc, eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import type { GoalRow } from '../../db/schema/index.js';
import { goals } from '../../db/schema/index.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { goalJson } from './goal-json.js';

/** A merchant's goal rows, oldest first (the statistics read them too). */
export function goalRows(db: Database, merchantId: string): Promise<GoalRow[]> {
  return db.select().from(goals).where(eq(goals.merchantId, merchantId)).orderBy(asc(goals.createdAt), asc(goals.id));
}

/** The partner's merchant's goals, oldest first. */
export async function listGoals(db: Database, partner: AuthenticatedPartner, merchantId: string) {
  await findOwnMerchant(db, partner, merchantId);
  return { goals: (await goalRows(db, merchantId)).map(goalJson) };
}
