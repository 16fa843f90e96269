import type { EventConsent } from '@partner/shared-schemas';
import type { EventClient } from '../../runtime/event-queue.js';

export type { EventClient };

/** A stored event as the statistics take it: what ingestion committed, with its `seq`. */
export interface StoredEvent {
  merchantId: string;
  seq: number;
  muid: string;
  eventName: string;
  /** ISO 8601 instant. */
  eventTime: string;
  /** The event's `data` as stored (JSON text). */
  rawData: string;
  consent: EventConsent;
  /** The client's, from the request that brought it (absent: unknown). */
  client?: EventClient | undefined;
}

/** An event's client as stored in PostgreSQL's `events.client`: `country|device|browser|os`, null when unknown. */
export function clientText(client: EventClient | undefined): string | null {
  if (!client) return null;
  const text = [client.country, client.device, client.browser, client.os].map((part) => part ?? '').join('|');
  return text === '|||' ? null : text;
}

export function clientFromText(text: string | null | undefined): EventClient | undefined {
  if (!text) return undefined;
  const [country, device, browser, os] = text.split('|');
  return {
    country: country || undefined,
    device: (device || undefined) as EventClient['device'],
    browser: browser || undefined,
    os: os || undefined,
  };
}
