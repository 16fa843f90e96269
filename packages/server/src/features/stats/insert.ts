import type { StoredEvent } from './stored-event.js';
import type { Visit } from './visits.js';

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
  visits: readonly Visit[] | undefined,
  livemodeOf: (merchantId: string) => boolean,
): { body: string; rows: number } {
  let body = '';
  let rows = 0;
  events.forEach((event, i) => {
    const at = Date.parse(event.eventTime);
    if (!(at >= EARLIEST && at < LATEST)) return;
    const visit = visits?.[i];
    const client = event.client ?? {};
    body += `${event.merchantId}\t${time(at)}\t${tsv(event.muid)}\t${event.seq}\t${visit?.id ?? 0}\t${time(visit?.start ?? at)}\t${tsv(event.eventName)}\t${tsv(event.rawData)}\t${tsv(visit?.referrer ?? '')}\t${tsv(visit?.utmSource ?? '')}\t${tsv(visit?.utmMedium ?? '')}\t${tsv(visit?.utmCampaign ?? '')}\t${visit?.channel ?? ''}\t${tsv(client.country ?? '')}\t${client.device ?? ''}\t${tsv(client.browser ?? '')}\t${tsv(client.os ?? '')}\t${event.consent}\t${livemodeOf(event.merchantId) ? 1 : 0}\n`;
    rows += 1;
  });
  return { body, rows };
}

const time = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
};
