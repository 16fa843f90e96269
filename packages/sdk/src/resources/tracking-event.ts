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
  /** A JSON document serialised as a string: `JSON.parse` it. */
  raw_data: string;
  /** The consent state it was collected under. */
  consent: EventConsent;
}
