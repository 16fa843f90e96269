// What the element says when it cannot show the statistics, in plain words (the details go to the
// `ptd-error` event for the page's own logs).
import { APIConnectionError, APIError } from '@partner/sdk';

/** A setup mistake of the page (missing attribute or session): said as is. */
export class SetupError extends Error {}

export function errorMessage(error: unknown): string {
  if (error instanceof SetupError) return `The dashboard is not set up yet: ${error.message}`;
  if (error instanceof APIConnectionError) {
    return 'The statistics service could not be reached. Check your connection and try again.';
  }
  if (error instanceof APIError) {
    if (error.status === 401) return 'Your session has ended. Reload the page to start a new one.';
    if (error.status === 403) return 'This session may not show these statistics.';
    if (error.status === 429) return 'Too many requests just now. Try again in a minute.';
    if (error.status === 400 || error.status === 422) return 'These dates cannot be shown. Pick another period.';
    return 'The statistics could not be loaded just now. Try again in a moment.';
  }
  return 'A new session could not be started. Try again in a moment.';
}
