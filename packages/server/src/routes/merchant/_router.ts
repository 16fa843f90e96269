import { router } from '../procedures.js';
import { createMerchantRoute } from './create.js';
import { deleteMerchantRoute } from './delete.js';
import { getMerchantRoute } from './get.js';
import { createGoalRoute } from './goals-create.js';
import { deleteGoalRoute } from './goals-delete.js';
import { listGoalsRoute } from './goals-list.js';
import { listMerchantsRoute } from './list.js';
import { createMerchantSessionRoute } from './sessions.js';
import { updateMerchantRoute } from './update.js';

export const merchantRouter = router({
  list: listMerchantsRoute,
  create: createMerchantRoute,
  get: getMerchantRoute,
  update: updateMerchantRoute,
  delete: deleteMerchantRoute,
  sessions: router({ create: createMerchantSessionRoute }),
  goals: router({ create: createGoalRoute, list: listGoalsRoute, delete: deleteGoalRoute }),
});
