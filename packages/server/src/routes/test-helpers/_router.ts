import { router } from '../procedures.js';
import { triggerStatsRoute } from './trigger-stats.js';
import { triggerTagRoute } from './trigger-tag.js';

/** Test mode's helpers (docs/decisions/test-mode.md): `mp_test_` keys only. */
export const testHelpersRouter = router({
  triggerTag: triggerTagRoute,
  triggerStats: triggerStatsRoute,
});
