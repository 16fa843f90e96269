import { StreamEventsQuery } from '@partner/shared-schemas';

/** `events.stream` input (shared-schemas' StreamEventsQuery). */
export const ZStreamEventsInput = StreamEventsQuery;
