import { listEvents } from '../../services/events/list-events.js';
import { partnerProcedure } from '../../trpc.js';
import { hotListOutput } from '../hot-list-output.js';
import { listEventsMeta, ZListEventsRequest, ZListEventsResponse } from './list.types.js';

export const listEventsRoute = partnerProcedure
  .meta(listEventsMeta)
  .input(ZListEventsRequest)
  .output(hotListOutput(ZListEventsResponse))
  .query(({ ctx, input }) => listEvents(ctx.db, ctx.partner, input, ctx.cursorKey));
