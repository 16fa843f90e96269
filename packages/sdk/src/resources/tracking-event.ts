// Apart from events.ts: the export and the stream yield events, and events.ts builds both.

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
}
