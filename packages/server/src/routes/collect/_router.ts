import { router } from '../procedures.js';
import { ingestRoute } from './ingest.js';

export const collectRouter = router({
  ingest: ingestRoute,
});
