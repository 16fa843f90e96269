import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isStorableInstant, readIsoInstant, TagBatchInput } from '@partner/shared-schemas';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type { AppDeps } from '../../context.js';
import { ingestEvents } from '../../features/events/ingest/ingest-events.js';
import { CollectorDirectory, type CollectorTag, hostOfHeader } from '../../features/tags/collector-directory.js';
import { type ConsentDecision, cookielessVisitor, decideConsent } from '../../features/tags/consent.js';
import { rootDomainOf } from '../../features/tags/domains.js';
import { AppError, isServerFailure, toAppError } from '../../kernel/errors.js';
import { bodyBytesRead, readJsonBody } from '../http/body.js';
import { clientUsesHttps } from '../http/client-address.js';
import { clientOf, visitorOf } from '../http/request-client.js';
import { sendError, sendJson } from '../http/respond.js';
import { pickEncoding, tagScript } from './tag-script.js';

const MUID_COOKIE = 'muid';
const MUID_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;
const MUID_VALUE = /^[A-Za-z0-9_-]{8,128}$/;
const SCRIPT_PATH = /^\/t\/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.js$/;
const SCRIPT_CACHE_CONTROL = 'public, max-age=300, stale-while-revalidate=86400';
/** A page clock further off ours than this (by a batch's `sentAt`) has its events' times corrected. */
const CLOCK_SKEW_MS = 60_000;

export interface Collector {
  /** The collector host a request is addressed to (its `Host` header), or null when it is not one. */
  match(req: IncomingMessage, pathname: string): Promise<string | null>;
  /** Answers a request for a collector host: the tag script, `POST /e`, or 404. */
  handle(req: IncomingMessage, res: ServerResponse, host: string, pathname: string): Promise<void>;
}

/** True when the page origin lies on the root domain (the root itself or any sub-domain). */
function originOnDomain(origin: string, rootDomain: string): boolean {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
    const host = url.hostname.toLowerCase();
    return host === rootDomain || host.endsWith(`.${rootDomain}`);
  } catch {
    return false;
  }
}

/** The first-party collector: what a merchant's pages reach on the tag's collector host. */
export function createCollector(deps: AppDeps): Collector {
  return new FirstPartyCollector(deps);
}

class FirstPartyCollector implements Collector {
  private readonly collectorHosts: AppDeps['collectorHosts'];
  private readonly directory: CollectorDirectory;
  // Hosts that are never collectors: no lookup for the API's own name.
  private readonly apiHosts: Set<string>;

  constructor(private readonly deps: AppDeps) {
    this.collectorHosts = deps.collectorHosts;
    this.directory = new CollectorDirectory(deps.db, this.collectorHosts, deps.deletedTags);
    this.apiHosts = new Set([deps.env.TAG_TARGET_HOST]);
    if (deps.env.PUBLIC_BASE_URL) this.apiHosts.add(new URL(deps.env.PUBLIC_BASE_URL).hostname.toLowerCase());
  }

  async match(req: IncomingMessage, pathname: string): Promise<string | null> {
    const host = hostOfHeader(req.headers.host);
    if (!host || this.apiHosts.has(host)) return null;
    // The in-memory host set (runtime/collector/collector-hosts.ts) answers every request at no cost.
    const known = this.collectorHosts.has(host);
    if (known !== undefined) return known ? host : null;
    // Without it (LISTEN failed, over its bound): the cheap checks first, so that only the
    // collector's own paths and methods cost a database lookup of the host.
    const method = req.method ?? 'GET';
    const isScript = (method === 'GET' || method === 'HEAD') && SCRIPT_PATH.test(pathname);
    const isBatch = pathname === '/e' && (method === 'POST' || method === 'OPTIONS');
    if (!isScript && !isBatch) return null;
    try {
      return (await this.directory.isCollectorHost(host)) ? host : null;
    } catch (error) {
      // The database is away: answer as the API (health checks keep working; the API reports it).
      this.deps.logger.warn({ err: error, host }, 'collector host lookup failed');
      return null;
    }
  }

  async handle(req: IncomingMessage, res: ServerResponse, host: string, pathname: string): Promise<void> {
    let cors: Record<string, string> = {};
    try {
      const method = req.method ?? 'GET';
      const script = SCRIPT_PATH.exec(pathname);
      if (script && (method === 'GET' || method === 'HEAD')) {
        await this.serveScript(req, res, host, script[1]!);
      } else if (pathname === '/e' && (method === 'POST' || method === 'OPTIONS')) {
        res.setHeader('cache-control', 'no-store');
        cors = corsHeaders(req, host);
        if (method === 'OPTIONS') answerPreflight(res, cors);
        else await this.collect(req, res, host, cors);
      } else {
        throw new AppError('NOT_FOUND', 'Not found');
      }
    } catch (error) {
      const appError = toAppError(error);
      if (isServerFailure(appError)) this.deps.logger.error({ err: error, host }, 'collector request failed');
      for (const [name, value] of Object.entries(cors)) res.setHeader(name, value);
      if (!req.complete) req.resume();
      sendError(res, appError);
    }
  }

  private async serveScript(req: IncomingMessage, res: ServerResponse, host: string, tagId: string): Promise<void> {
    const tag = await this.directory.tag(tagId.toLowerCase());
    if (!tag || tag.collectorHost !== host) throw new AppError('NOT_FOUND', 'Not found');
    const script = tagScript(tag.tagId, tag.consent);
    res.setHeader('cache-control', SCRIPT_CACHE_CONTROL);
    res.setHeader('etag', script.etag);
    res.setHeader('vary', 'Accept-Encoding');
    res.setHeader('content-type', 'text/javascript; charset=utf-8');
    const ifNoneMatch = req.headers['if-none-match'];
    const opaque = script.etag.replace(/^W\//, '');
    if (ifNoneMatch?.split(',').some((tag) => tag.trim() === '*' || tag.trim().replace(/^W\//, '') === opaque)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    const encoding = pickEncoding(req.headers['accept-encoding']);
    const body = encoding === 'br' ? script.brotli : encoding === 'gzip' ? script.gzip : script.body;
    if (encoding) res.setHeader('content-encoding', encoding);
    res.setHeader('content-length', body.length);
    res.statusCode = 200;
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  private async collect(
    req: IncomingMessage,
    res: ServerResponse,
    host: string,
    cors: Record<string, string>,
  ): Promise<void> {
    const { deps } = this;
    const receivedAt = Date.now();
    const client = clientOf(req, res);
    await deps.limits.limitCollector(client); // the collector policy of every way in (runtime/rate-limits.ts)
    const body = await readJsonBody(req, { textPlain: true });
    await deps.limits.chargeReadBytes(client, bodyBytesRead(req));
    const input = TagBatchInput.parse(body);
    const tag = await this.directory.tag(input.tagId.toLowerCase());
    if (!tag || tag.collectorHost !== host) throw new AppError('TAG_NOT_FOUND', `No tag ${input.tagId} on ${host}`);

    const given = parseCookies(req.headers.cookie ?? '')[MUID_COOKIE];
    const decision = decideConsent(tag.consent, input.consent, req.headers['sec-gpc'] === '1');
    const headers: Record<string, string> = { ...cors };
    const cookie = (value: string, maxAge: number) =>
      serializeCookie(MUID_COOKIE, value, {
        domain: tag.rootDomain,
        path: '/',
        maxAge,
        sameSite: 'lax',
        secure: clientUsesHttps(req), // X-Forwarded-Proto only from a trusted proxy (TRUST_PROXY)
        httpOnly: true,
      });
    if (decision.clearCookie && given !== undefined) headers['set-cookie'] = cookie('', 0);
    let result: { accepted: number } = { accepted: 0 };
    if (decision.state !== null) {
      const muid = await this.visitorOf(req, client.ip, tag, decision, given);
      // The first-party cookie (or the cookieless hash) names the visitor: a body `muid` counts only without one.
      result = await ingestEvents(
        deps,
        { tagId: input.tagId, events: onOurClock(input, receivedAt) },
        {
          muid,
          muidWins: muid === given || decision.visitor === 'hash',
          consent: decision.state,
          visitor: { request: visitorOf(req), way: 'tag' },
        },
      );
      if (decision.visitor === 'cookie' && muid !== given) headers['set-cookie'] = cookie(muid, MUID_MAX_AGE_SECONDS);
    }
    sendJson(res, 202, result, headers);
  }

  /** The batch's visitor: the muid cookie (a new one when absent or malformed), or the cookieless hash. */
  private async visitorOf(
    req: IncomingMessage,
    ip: string,
    tag: CollectorTag,
    decision: ConsentDecision,
    given: string | undefined,
  ): Promise<string> {
    if (decision.visitor === 'hash') {
      const salt = await this.deps.visitorSalt.today();
      return cookielessVisitor(salt, tag.merchantId, ip, req.headers['user-agent'] ?? '');
    }
    return given && MUID_VALUE.test(given) ? given : randomUUID();
  }
}

/**
 * The batch's events, their `event_time` moved by the difference between the collector's clock and the page's when it
 * exceeds CLOCK_SKEW_MS: a device whose clock is off still dates its events right, and the times of one page keep
 * their spacing.
 */
function onOurClock(input: TagBatchInput, receivedAt: number): TagBatchInput['events'] {
  const skew = input.sentAt === undefined ? 0 : receivedAt - input.sentAt;
  if (Math.abs(skew) <= CLOCK_SKEW_MS) return input.events;
  return input.events.map((event) => {
    const read = event.event_time === undefined ? undefined : readIsoInstant(event.event_time);
    if (!(read instanceof Date) || !isStorableInstant(read.getTime() + skew)) return event;
    return { ...event, event_time: new Date(read.getTime() + skew).toISOString() };
  });
}

/** CORS for `/e`: only pages on the host's own root domain. Returns the headers to answer with. */
function corsHeaders(req: IncomingMessage, host: string): Record<string, string> {
  const origin = req.headers.origin;
  if (origin === undefined) return {};
  const root = rootDomainOf(host) ?? host;
  if (!originOnDomain(origin, root)) {
    throw new AppError('ACCESS_DENIED', `Origin ${origin} may not send events to this tag`);
  }
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    // The tag reads Retry-After to time its re-send after a 429 or 503.
    'access-control-expose-headers': 'Retry-After',
    vary: 'Origin',
  };
}

function answerPreflight(res: ServerResponse, cors: Record<string, string>): void {
  res.writeHead(204, {
    ...cors,
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'content-type',
    'access-control-max-age': '600',
  });
  res.end();
}
