import { StreamEventsQuery } from '@partner/shared-schemas';

/**
 * `events.stream` input (shared-schemas' StreamEventsQuery). `lastEventId` is filled by tRPC from
 * `Last-Event-ID` (or the `lastEventId` query parameter) when an SSE client reconnects: the `seq` of
 * the last event seen. No openapi meta: trpc-to-openapi cannot describe subscriptions; the REST
 * twin is `GET /v1/partners/events/stream` (transport/rest/sse-response.ts).
 */
export const ZStreamEventsInput = StreamEventsQuery;
