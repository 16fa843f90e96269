import { router } from '../procedures.js';
import { createMerchantRoute } from './create.js';
import { listMerchantsRoute } from './list.js';

export const merchantRouter = router({
  list: listMerchantsRoute,
  create: createMerchantRoute,
});
