import { router } from '../../trpc.js';
import { listEventsRoute } from './list.js';

export const eventsRouter = router({
  list: listEventsRoute,
});
