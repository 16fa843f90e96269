import { GOALS_MAX, type Goal } from '@partner/shared-schemas';
import { count, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { goals } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { goalJson } from './goal-json.js';

/** A new goal of the partner's merchant; 409 LIMIT_EXCEEDED past GOALS_MAX. */
export async function createGoal(
  db: Database,
  partner: AuthenticatedPartner,
  input: { merchantId: string; name: string; eventName?: string | undefined; pathPattern?: string | undefined },
): Promise<Goal> {
  await findOwnMerchant(db, partner, input.merchantId);
  return db.transaction(async (tx) => {
    await tx.execute(sql`select 1 from merchants where id = ${input.merchantId}::uuid for update`);
    const [held] = await tx.select({ n: count() }).from(goals).where(eq(goals.merchantId, input.merchantId));
    if ((held?.n ?? 0) >= GOALS_MAX) {
      throw new AppError('LIMIT_EXCEEDED', `A merchant has at most ${GOALS_MAX} goals: delete one first.`);
    }
    const [row] = await tx
      .insert(goals)
      .values({
        merchantId: input.merchantId,
        name: input.name,
        eventName: input.eventName ?? null,
        pathPattern: input.pathPattern ?? null,
      })
      .returning();
    return goalJson(row!);
  });
}
