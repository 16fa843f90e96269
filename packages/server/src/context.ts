import type { Database } from './db/client.js';
import type { DnsResolver } from './dns/resolver.js';
import type { Env } from './env.js';
import type { RateLimitClient, RateLimits } from './http/rate-limit.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { EventLog } from './services/events/event-log.js';
import type { StreamHub } from './services/events/hub.js';
import type { EventQueue } from './services/events/queue.js';
import type { StreamCaps } from './services/events/stream-caps.js';
import type { TagLiveness } from './services/events/tag-liveness.js';
import type { IdempotencyStore } from './services/idempotency/store.js';
import type { AuthenticatedPartner } from './services/partner/authenticate.js';
import type { ApiKeys } from './services/partner/keys.js';
import type { CollectorHostSet } from './services/tag/collector-hosts.js';
import type { TagStateConfig } from './services/tag/tag-state.js';

/** What every request shares: built once at start. */
export interface AppDeps {
  db: Database;
  env: Env;
  logger: Logger;
  dns: DnsResolver;
  /** What the tag checks need: target host, monitor schedule, the webhook outbox (services/tag/tag-state.ts). */
  tagState: TagStateConfig;
  /** Real-time event stream fan-out: one LISTEN per process (services/events/hub.ts). */
  streams: StreamHub;
  /** Per-key and per-IP rate limits (http/rate-limit.ts). */
  limits: RateLimits;
  /** The bounded group-commit queue every ingestion route writes through (services/events/queue.ts). */
  eventQueue: EventQueue;
  /** The durable event log (NATS JetStream) when EVENT_LOG_URL is set (services/events/event-log.ts). */
  eventLog?: EventLog | undefined;
  /** Which tags take events (cached briefly) and their lifecycle once they stored some (services/events/tag-liveness.ts). */
  tagLiveness: TagLiveness;
  /** Stored responses per (partner, Idempotency-Key), and their purge clock (services/idempotency/store.ts). */
  idempotency: IdempotencyStore;
  /** This app's Prometheus registry and instruments (metrics.ts); register new metrics through it. */
  metrics: Metrics;
  /** Concurrent event-stream caps (services/events/stream-caps.ts). */
  streamCaps: StreamCaps;
  /** The key that signs event-list cursors (services/events/cursor.ts: CURSOR_SECRET or the database's own). */
  cursorKey: Buffer;
  /** API keys: authentication, the verified-key cache, `last_used_at`, stream key watch (services/partner/keys.ts). */
  keys: ApiKeys;
  /** Every collector host in memory, kept by NOTIFY (services/tag/collector-hosts.ts). */
  collectorHosts: CollectorHostSet;
}

export interface Context extends AppDeps {
  requestId: string;
  /** The raw Authorization header, authenticated by the partner middleware. */
  authorization: string | string[] | undefined;
  /**
   * Set when the transport already authenticated the request and charged the key's budget (REST
   * does, before reading the body); otherwise the partner middleware does both, per call.
   */
  partner: AuthenticatedPartner | null;
  /** The caller, for the rate-limit policy (http/rate-limit.ts); absent for in-process callers. */
  client?: RateLimitClient;
  /** True when the transport already charged the collector budget for this call (REST `/v1/collect`). */
  collectorCharged?: boolean;
}

/** What one call adds to the shared dependencies. */
export type RequestScope = Omit<Context, keyof AppDeps>;

/**
 * One call's context: its own fields, then the shared dependencies. The order is for speed: on
 * Node 20 (V8 11.3) an object literal that spreads first and adds keys after (`{ ...deps, requestId }`)
 * builds fresh hidden classes for each new key on every call, about 10 µs here for this context,
 * against 0.2 µs with the keys first (`bench/README.md`, "Object spread"). AppDeps and
 * RequestScope share no key, so nothing is overwritten either way.
 */
export function requestContext(deps: AppDeps, scope: RequestScope): Context {
  return { ...scope, ...deps };
}
