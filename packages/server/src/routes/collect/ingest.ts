import { ingestEvents } from '../../features/events/ingest/ingest-events.js';
import { collectorProcedure } from '../procedures.js';
import { ingestMeta, ZIngestRequest, ZIngestResponse } from './ingest.types.js';

export const ingestRoute = collectorProcedure
  .meta(ingestMeta)
  .input(ZIngestRequest)
  .output(ZIngestResponse)
  .mutation(({ ctx, input }) =>
    ingestEvents(ctx, input, ctx.visitor ? { visitor: { request: ctx.visitor, way: 'server' } } : {}),
  );
