import type { Goal } from '@partner/shared-schemas';
import type { GoalRow } from '../../db/schema/index.js';

export function goalJson(row: GoalRow): Goal {
  return {
    goalId: row.id,
    merchantId: row.merchantId,
    name: row.name,
    eventName: row.eventName,
    pathPattern: row.pathPattern,
    createdAt: row.createdAt.toISOString(),
  };
}
