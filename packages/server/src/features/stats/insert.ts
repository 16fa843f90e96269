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

const escape = (value: string) =>
  value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));

/**
 * The events as TabSeparated rows of INSERT_EVENTS' input: the JSON is sent as stored and read by
 * ClickHouse, so this process only joins strings.
 */
export function eventsTsv(events: readonly StoredEvent[], livemodeOf: (merchantId: string) => boolean): string {
  let body = '';
  for (const event of events) {
    const at = Date.parse(event.eventTime);
    if (!(at >= EARLIEST && at < LATEST)) continue;
    const time = new Date(at).toISOString();
    body += `${event.merchantId}\t${time.slice(0, 10)} ${time.slice(11, 23)}\t${escape(event.muid)}\t${event.seq}\t${escape(event.eventName)}\t${escape(event.rawData)}\t${event.consent}\t${livemodeOf(event.merchantId) ? 1 : 0}\n`;
  }
  return body;
}

/**
 * Types stored events at write time: page views keep their path, the referrer's host (lower case)
 * and the page URL's utm values (`+` read as a space), each cut at 200 characters, `(none)` when
 * absent; purchases their revenue (a JSON number or a decimal string, at most 46 digits before the
 * point and 30 after, in a three-letter currency; else a purchase without revenue) and its scale;
 * the muid becomes a 64-bit `visitor`. The rules of the statistics, in one place.
 */
/** A page view's dimension value: cut at 200 characters, `(none)` when empty; '' for other events. */
const dimension = (value: string) =>
  `if(e.event_name = 'PageView', if(${value} = '', '(none)', substringUTF8(${value}, 1, 200)), '')`;
const utm = (name: string) => dimension(`replaceAll(extract(url, '[?&]${name}=([^&#]*)'), '+', ' ')`);

export const INSERT_EVENTS = `INSERT INTO events (merchant_id, event_time, visitor, seq, event_name, path, referrer,
  utm_source, utm_medium, utm_campaign, currency, revenue, revenue_scale, consent, livemode)
WITH
  if(e.event_name = 'PageView', e.raw, '') AS page,
  if(e.event_name = 'Purchase', e.raw, '') AS buy,
  JSONExtractString(page, 'url') AS url,
  JSONExtractString(buy, 'currency') AS cur,
  if(JSONType(buy, 'value') = 'String', JSONExtractString(buy, 'value'), JSONExtractRaw(buy, 'value')) AS val,
  match(cur, '^[A-Za-z]{3}$') AND match(val, '^-?[0-9]{1,46}(\\\\.[0-9]{1,30})?$') AS paid
SELECT e.merchant_id, e.event_time, sipHash64(e.muid), e.seq, e.event_name,
  ${dimension("JSONExtractString(page, 'path')")},
  ${dimension("lowerUTF8(extract(JSONExtractString(page, 'referrer'), '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)'))")},
  ${utm('utm_source')},
  ${utm('utm_medium')},
  ${utm('utm_campaign')},
  if(paid, upper(cur), ''),
  if(paid, toDecimal256(val, 30), toDecimal256(0, 30)),
  if(paid, length(splitByChar('.', val)[2]), 0),
  e.consent, e.livemode
FROM input('merchant_id UUID, event_time DateTime64(3, ''UTC''), muid String, seq UInt64, event_name String, raw String,
  consent Enum8(''not_required'' = 0, ''granted'' = 1, ''implied'' = 2, ''cookieless'' = 3), livemode Bool') AS e
FORMAT TabSeparated`;
