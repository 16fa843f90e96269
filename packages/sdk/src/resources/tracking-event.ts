// Apart from events.ts: the export and the stream yield events, and events.ts builds both.

/**
 * The consent state an event was collected under: `not_required` (a tag in mode `none`,
 * `events.send`, events from before consent existed), `granted`, `implied` (an `opt-out` tag not
 * denied), `cookieless` (no consent: no cookie, the visitor a daily-rotating hash).
 */
export type EventConsent = 'not_required' | 'granted' | 'implied' | 'cookieless';

/** A tracking event (spec 2.4). */
export interface TrackingEvent {
  id: string;
  /** Tracking user id: the same value across events identifies one user. */
  muid: string;
  event_name: string;
  /** ISO 8601, UTC. */
  event_time: string;
  /** The event's data as the API sends it: a JSON document serialised as a string. */
  raw_data: string;
  /** The consent state it was collected under. */
  consent: EventConsent;
  /**
   * `raw_data` parsed, added by the SDK to every event it yields (list, export, stream);
   * `undefined` when `raw_data` is not JSON (never a throw). Free-form: any event name may carry
   * any JSON, so check its shape before use.
   */
  data?: unknown;
}

/** Adds `data` (`raw_data` parsed, or undefined) to an event as it is read, in place. @internal */
export function withData<E extends { raw_data?: unknown; data?: unknown }>(event: E): E {
  let data: unknown;
  if (typeof event.raw_data === 'string') {
    try {
      data = JSON.parse(event.raw_data);
    } catch {
      // A raw_data that is not JSON stays readable as raw_data; data says there is none.
    }
  }
  event.data = data;
  return event;
}
