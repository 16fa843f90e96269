import { listEvents } from '../../features/events/read/list-events.js';
import { hotListOutput } from '../hot-list-output.js';
import { partnerProcedure } from '../procedures.js';
import { listEventsMeta, ZListEventsRequest, ZListEventsResponse } from './list.types.js';
import { nextPageLink } from './next-link.js';

export const listEventsRoute = partnerProcedure
  .meta(listEventsMeta)
  .input(ZListEventsRequest)
  .output(hotListOutput(ZListEventsResponse))
  .query(async ({ ctx, input }) => {
    const page = await listEvents(ctx.reads, ctx.partner, input, ctx.cursorKey);
    const { nextCursor } = page.pagination;
    if (nextCursor !== null) ctx.client?.setHeader('link', nextPageLink(input, nextCursor));
    return page;
  });
