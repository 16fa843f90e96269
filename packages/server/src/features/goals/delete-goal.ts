import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { goals } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';

/** Deletes a goal of the partner's merchant; another merchant's or a missing one is 404 GOAL_NOT_FOUND. */
export async function deleteGoal(
  db: Database,
  partner: AuthenticatedPartner,
  input: { merchantId: string; goalId: string },
): Promise<void> {
  await findOwnMerchant(db, partner, input.merchantId);
  const gone = await db
    .delete(goals)
    .where(and(eq(goals.id, input.goalId), eq(goals.merchantId, input.merchantId)))
    .returning({ id: goals.id });
  if (gone.length === 0)
    throw new AppError('GOAL_NOT_FOUND', `No goal ${input.goalId} for merchant ${input.merchantId}`);
}
