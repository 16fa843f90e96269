import { router } from '../../trpc.js';
import { ingestRoute } from './ingest.js';

export const collectRouter = router({
  ingest: ingestRoute,
});
