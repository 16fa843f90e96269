import { ingestEvents } from '../../services/events/ingest-events.js';
import { collectorProcedure } from '../../trpc.js';
import { ingestMeta, ZIngestRequest, ZIngestResponse } from './ingest.types.js';

export const ingestRoute = collectorProcedure
  .meta(ingestMeta)
  .input(ZIngestRequest)
  .output(ZIngestResponse)
  .mutation(({ ctx, input }) => ingestEvents(ctx, input));
