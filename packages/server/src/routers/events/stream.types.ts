import { Uuid } from '@partner/shared-schemas';
import { z } from 'zod';

/**
 * `events.stream` input. `lastEventId` is filled by tRPC from `Last-Event-ID` (or the
 * `lastEventId` query parameter) when an SSE client reconnects: the `seq` of the last event seen.
 * No openapi meta: trpc-to-openapi cannot describe subscriptions; the REST twin is
 * `GET /v1/partners/events/stream` (http/event-stream.ts).
 */
export const ZStreamEventsInput = z.object({
  merchantId: Uuid,
  events: z.union([z.string().max(4000), z.array(z.string()).max(50)]).optional(),
  lastEventId: z.string().max(32).nullish(),
});
export type StreamEventsInput = z.input<typeof ZStreamEventsInput>;
