import { router } from '../procedures.js';
import { listEventsRoute } from './list.js';
import { streamEventsRoute } from './stream.js';

export const eventsRouter = router({
  list: listEventsRoute,
  stream: streamEventsRoute,
});
