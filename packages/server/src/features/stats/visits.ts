import { createHash } from 'node:crypto';
import type { Clickhouse } from '../../db/clickhouse/client.js';
import { CLICK_IDS, channelOf, type Landing } from './channel.js';
import type { StoredEvent } from './stored-event.js';

/** A visit ends after 30 minutes without an event of its visitor. */
const VISIT_GAP_MS = 30 * 60_000;

/** What every event of a visit carries: its id and its landing's source, taken from its first page. */
export interface Visit {
  id: string;
  start: number;
  end: number;
  referrer: string;
  utmSource: string;
  utmMedium: string;
  utmCampaign: string;
  channel: string;
  /** The visit has a page view yet (a visit begun by another event takes its first page's source). */
  paged: boolean;
}

const CACHE_MAX = 200_000;
const REFERRER_HOST = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#:]*)/;

const hostOf = (url: string) => REFERRER_HOST.exec(url)?.[1]?.toLowerCase() ?? '';
/** Two hosts of one site: equal, or one a subdomain of the other (`www.shop.com` and `shop.com`). */
const sameSite = (a: string, b: string) => a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);

const PARAMS = new Map(
  ['utm_source', 'utm_medium', 'utm_campaign', ...Object.keys(CLICK_IDS)].map((name) => [
    name,
    new RegExp(`[?&]${name}=([^&#]*)`),
  ]),
);

/** A query parameter's value, decoded (`+` is a space; a malformed escape is kept as sent). */
function param(url: string, name: string): string {
  const value = PARAMS.get(name)?.exec(url)?.[1];
  if (value === undefined) return '';
  const spaced = value.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced).slice(0, 200);
  } catch {
    return spaced.slice(0, 200);
  }
}

/**
 * A page view's landing: the referrer's host unless it is the page's own site (internal
 * navigation is never a source), the utm values and a click id of its URL.
 */
function landingOf(data: string): Landing {
  let page: { url?: unknown; referrer?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(data);
    if (parsed !== null && typeof parsed === 'object') page = parsed as typeof page;
  } catch {}
  const url = typeof page.url === 'string' ? page.url : '';
  const referrer = typeof page.referrer === 'string' ? hostOf(page.referrer) : '';
  const own = hostOf(url);
  let clickId: Landing['clickId'] = '';
  for (const [name, kind] of Object.entries(CLICK_IDS)) {
    if (url.includes(`${name}=`) && param(url, name)) {
      clickId = kind;
      break;
    }
  }
  return {
    referrerHost: referrer && own && sameSite(referrer, own) ? '' : referrer,
    utmSource: param(url, 'utm_source'),
    utmMedium: param(url, 'utm_medium'),
    utmCampaign: param(url, 'utm_campaign'),
    clickId,
  };
}

function visitId(merchantId: string, muid: string, start: number): string {
  return createHash('sha256').update(`${merchantId}\u0000${muid}\u0000${start}`).digest().readBigUInt64BE(0).toString();
}

function sourced(visit: Visit, data: string): void {
  const landing = landingOf(data);
  visit.referrer = landing.referrerHost;
  visit.utmSource = landing.utmSource;
  visit.utmMedium = landing.utmMedium;
  visit.utmCampaign = landing.utmCampaign;
  visit.channel = channelOf(landing);
  visit.paged = true;
}

/**
 * Assigns each event the visit it belongs to: a visitor's events with no gap over 30 minutes, in
 * the order they reach it. A visit's source (referrer, utm values, channel) is its first page's.
 * The visits of recent visitors are held here (at most CACHE_MAX); a visitor not held is looked
 * up in ClickHouse, so a visit carries on across a restart. An event that fits no known visit
 * (dated before its visitor's current one) starts a visit of its own.
 */
export class VisitAssigner {
  private readonly visits = new Map<string, Visit>();
  /**
   * Since when every visit of a visitor is held here, so that a visitor not held has none to carry
   * on: from the start, when this process is the only writer (chDB), and from the end of the last
   * visit dropped for room. Never, with several writers (a ClickHouse server): always look up.
   */
  private heldSince: number;

  constructor(
    private readonly clickhouse: Clickhouse,
    soleWriter: boolean,
  ) {
    this.heldSince = soleWriter ? Date.now() : Number.POSITIVE_INFINITY;
  }

  /**
   * The visit of each event, in the events' order. The visits are the ones held: read them before
   * the next call (a visit begun by a sign-up and paged later in the same batch gives every event
   * of it the page's source).
   */
  async assign(events: readonly StoredEvent[]): Promise<Visit[]> {
    await this.lookUp(events);
    return events.map((event) => this.visitOf(event));
  }

  private key(event: StoredEvent): string {
    return `${event.merchantId}\u0000${event.muid}`;
  }

  private visitOf(event: StoredEvent): Visit {
    const key = this.key(event);
    const at = Date.parse(event.eventTime);
    const held = this.visits.get(key);
    if (held && at >= held.start - VISIT_GAP_MS && at <= held.end + VISIT_GAP_MS) {
      held.start = Math.min(held.start, at);
      held.end = Math.max(held.end, at);
      if (!held.paged && event.eventName === 'PageView') sourced(held, event.rawData);
      this.touch(key, held);
      return held;
    }
    const visit: Visit = {
      id: visitId(event.merchantId, event.muid, at),
      start: at,
      end: at,
      referrer: '',
      utmSource: '',
      utmMedium: '',
      utmCampaign: '',
      channel: 'Direct',
      paged: false,
    };
    if (event.eventName === 'PageView') sourced(visit, event.rawData);
    // A late event's visit is its own: the visitor's current one stays the one held.
    if (!held || at > held.end) this.touch(key, visit);
    return visit;
  }

  private touch(key: string, visit: Visit): void {
    this.visits.delete(key);
    this.visits.set(key, visit);
    if (this.visits.size <= CACHE_MAX) return;
    const [oldest, dropped] = this.visits.entries().next().value as [string, Visit];
    this.visits.delete(oldest);
    this.heldSince = Math.max(this.heldSince, dropped.end + VISIT_GAP_MS);
  }

  /** The latest visit of the events' visitors not held here, from ClickHouse. */
  private async lookUp(events: readonly StoredEvent[]): Promise<void> {
    const missing = new Map<string, { merchantId: string; muids: Set<string>; from: number }>();
    for (const event of events) {
      if (this.visits.has(this.key(event))) continue;
      const at = Date.parse(event.eventTime) - VISIT_GAP_MS;
      // Every visit that could carry on into this event would be held: none is.
      if (at >= this.heldSince) continue;
      const entry = missing.get(event.merchantId) ?? { merchantId: event.merchantId, muids: new Set(), from: at };
      entry.muids.add(event.muid);
      entry.from = Math.min(entry.from, at);
      missing.set(event.merchantId, entry);
    }
    for (const { merchantId, muids, from } of missing.values()) {
      const rows = await this.clickhouse.query<{
        muid: string;
        id: string;
        start: number;
        end: number;
        referrer: string;
        utm_source: string;
        utm_medium: string;
        utm_campaign: string;
        channel: string;
        pages: number;
      }>(
        `SELECT m.muid AS muid, toString(e.visit) AS id, toUnixTimestamp64Milli(min(e.visit_start)) AS start,
           toUnixTimestamp64Milli(max(e.event_time)) AS end, any(e.referrer) AS referrer,
           any(e.utm_source) AS utm_source, any(e.utm_medium) AS utm_medium, any(e.utm_campaign) AS utm_campaign,
           any(e.channel) AS channel, countIf(e.event_name = 'PageView') AS pages
         FROM events AS e
         INNER JOIN (SELECT arrayJoin({muids:Array(String)}) AS muid, sipHash64(muid) AS visitor) AS m ON e.visitor = m.visitor
         WHERE e.merchant_id = {merchant:UUID} AND e.event_time >= toDateTime64({from:Int64} / 1000, 3)
         GROUP BY m.muid, e.visit
         ORDER BY end DESC
         LIMIT 1 BY muid`,
        { merchant: merchantId, muids: [...muids], from },
        { writer: true },
      );
      for (const row of rows) {
        this.touch(`${merchantId}\u0000${row.muid}`, {
          id: row.id,
          start: Number(row.start),
          end: Number(row.end),
          referrer: row.referrer === '(none)' ? '' : row.referrer,
          utmSource: row.utm_source === '(none)' ? '' : row.utm_source,
          utmMedium: row.utm_medium === '(none)' ? '' : row.utm_medium,
          utmCampaign: row.utm_campaign === '(none)' ? '' : row.utm_campaign,
          channel: row.channel,
          paged: Number(row.pages) > 0,
        });
      }
    }
  }
}
