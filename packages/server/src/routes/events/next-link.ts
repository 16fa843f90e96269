import type { ListEventsQuery } from '@partner/shared-schemas';

type ListInput = Omit<ListEventsQuery, 'page'> & { page?: number };

/** The `Link` header of an event-list page that has a next one. */
export function nextPageLink(input: ListInput, nextCursor: string): string {
  const query = new URLSearchParams();
  query.set('merchantId', input.merchantId);
  if (input.limit !== undefined) query.set('limit', String(input.limit));
  if (input.sortBy !== undefined) query.set('sortBy', input.sortBy);
  if (input.sortOrder !== undefined) query.set('sortOrder', input.sortOrder);
  if (input.events !== undefined) query.set('events', input.events);
  if (input.muid !== undefined) query.set('muid', input.muid);
  if (input.startDate !== undefined) query.set('startDate', input.startDate);
  if (input.endDate !== undefined) query.set('endDate', input.endDate);
  query.set('cursor', nextCursor);
  return `</v1/partners/events?${query.toString()}>; rel="next"`;
}
