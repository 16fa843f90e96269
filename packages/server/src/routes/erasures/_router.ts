import { router } from '../procedures.js';
import { createErasureRoute } from './create.js';
import { getErasureRoute } from './get.js';

export const erasuresRouter = router({
  create: createErasureRoute,
  get: getErasureRoute,
});
