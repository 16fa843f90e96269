import { collectRouter } from './collect/_router.js';
import { erasuresRouter } from './erasures/_router.js';
import { eventsRouter } from './events/_router.js';
import { merchantRouter } from './merchant/_router.js';
import { router } from './procedures.js';
import { settingsRouter } from './settings/_router.js';
import { statsRouter } from './stats/_router.js';
import { tagRouter } from './tag/_router.js';
import { testHelpersRouter } from './test-helpers/_router.js';
import { webhooksRouter } from './webhooks/_router.js';

export const appRouter = router({
  merchant: merchantRouter,
  tag: tagRouter,
  events: eventsRouter,
  collect: collectRouter,
  webhooks: webhooksRouter,
  stats: statsRouter,
  erasures: erasuresRouter,
  testHelpers: testHelpersRouter,
  settings: settingsRouter,
});

export type AppRouter = typeof appRouter;
