import type { EventConsent } from '@partner/shared-schemas';

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
}

/** The instants ClickHouse's DateTime64 holds; an event dated outside is not counted. */
const EARLIEST = Date.UTC(1900, 0, 1);
const LATEST = Date.UTC(2300, 0, 1);

const tsv = (value: string) =>
  value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));

/**
 * The events as TabSeparated rows of `events_in` (db/clickhouse/migrations/0002_events_in.sql,
 * whose view types them into `events`): the data's JSON is sent as stored and read by ClickHouse,
 * so this process only joins strings.
 */
export function eventsTsv(
  events: readonly StoredEvent[],
  livemodeOf: (merchantId: string) => boolean,
): { body: string; rows: number } {
  let body = '';
  let rows = 0;
  for (const event of events) {
    const at = Date.parse(event.eventTime);
    if (!(at >= EARLIEST && at < LATEST)) continue;
    const time = new Date(at).toISOString();
    body += `${event.merchantId}\t${time.slice(0, 10)} ${time.slice(11, 23)}\t${tsv(event.muid)}\t${event.seq}\t${tsv(event.eventName)}\t${tsv(event.rawData)}\t${event.consent}\t${livemodeOf(event.merchantId) ? 1 : 0}\n`;
    rows += 1;
  }
  return { body, rows };
}
