import type { ListEventsQuery } from '@partner/shared-schemas';

type ListInput = Omit<ListEventsQuery, 'page'> & { page?: number };

/**
 * The `Link` header (RFC 8288) of an event-list page that has a next one:
 * `</v1/partners/events?merchantId=...&cursor=...>; rel="next"`, the request's filters with the next
 * cursor and without `page`. It comes with the response head, so a client can ask for the next page
 * before it has read and parsed this one (the SDK does: docs/decisions/events-list-and-cursors.md, "Fetching the next page
 * ahead"). Every value is percent-encoded (commas too), so the header splits safely on commas.
 */
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
