import { ingestEvents } from '../../services/events/ingest-events.js';
import { publicProcedure } from '../../trpc.js';
import { ingestMeta, ZIngestRequest, ZIngestResponse } from './ingest.types.js';

export const ingestRoute = publicProcedure
  .meta(ingestMeta)
  .input(ZIngestRequest)
  .output(ZIngestResponse)
  .mutation(({ ctx, input }) => ingestEvents(ctx, input));
