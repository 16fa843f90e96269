import type { Database } from './db/client.js';
import type { ReadDb } from './db/read-routing.js';
import type { RequestVisitor } from './features/events/ingest/visitor-client.js';
import type { EventSubscription } from './features/events/stream/subscription.js';
import type { AuthenticatedPartner } from './features/partners/authenticate.js';
import type { StatsStore } from './features/stats/store.js';
import type { TagLiveness } from './features/tags/lifecycle/tag-liveness.js';
import type { TagStateConfig } from './features/tags/lifecycle/tag-state.js';
import type { Env } from './kernel/env.js';
import type { Logger } from './kernel/logger.js';
import type { Metrics } from './kernel/metrics.js';
import type { CollectorHostSet } from './runtime/collector/collector-hosts.js';
import type { DailySalt } from './runtime/collector/daily-salt.js';
import type { DeletedTags } from './runtime/collector/deleted-tags.js';
import type { DnsResolver } from './runtime/dns-resolver.js';
import type { EventLog } from './runtime/event-log.js';
import type { EventQueue } from './runtime/event-queue.js';
import type { HeldBytes } from './runtime/held-bytes.js';
import type { IdempotencyStore } from './runtime/idempotency-store.js';
import type { ApiKeys } from './runtime/keys/api-keys.js';
import type { RateLimitClient, RateLimits } from './runtime/rate-limits.js';
import type { StreamCaps } from './runtime/stream-caps.js';
import type { StreamHub } from './runtime/stream-hub.js';
import type { WebhookHostResolver } from './runtime/webhook-host-resolver.js';

/** What every request shares: built once at start. */
export interface AppDeps {
  /** The primary: writes and every read that must see them. */
  db: Database;
  /** The event list, export and statistics: a streaming replica when one is set and healthy, else the primary (db/read-routing.ts). */
  reads: ReadDb;
  /** The statistics (features/stats/store.ts); undefined in a process of several without CLICKHOUSE_URL. */
  stats?: StatsStore | undefined;
  env: Env;
  logger: Logger;
  dns: DnsResolver;
  /** What the tag checks need: target host, monitor schedule, the webhook outbox (features/tags/lifecycle/tag-state.ts). */
  tagState: TagStateConfig;
  /** Real-time event stream fan-out: one LISTEN per process (runtime/stream-hub.ts). */
  streams: StreamHub<EventSubscription>;
  /** Per-key and per-IP rate limits (runtime/rate-limits.ts). */
  limits: RateLimits;
  /** The bounded event queue (group commit) every ingestion route writes through (runtime/event-queue.ts). */
  eventQueue: EventQueue;
  /** The durable event log (NATS JetStream) when EVENT_LOG_URL is set (runtime/event-log.ts). */
  eventLog?: EventLog | undefined;
  /** Which tags take events (cached briefly) and their lifecycle once they stored some (features/tags/lifecycle/tag-liveness.ts). */
  tagLiveness: TagLiveness;
  /** Stored responses per (partner, Idempotency-Key), and their purge clock (runtime/idempotency-store.ts). */
  idempotency: IdempotencyStore;
  /** This app's Prometheus registry and instruments (metrics.ts); register new metrics through it. */
  metrics: Metrics;
  /** Concurrent event-stream caps (runtime/stream-caps.ts). */
  streamCaps: StreamCaps;
  /** Concurrent export caps (the same class: EXPORT_MAX_PER_PARTNER, EXPORT_MAX_PER_PROCESS). */
  exportCaps: StreamCaps;
  /** The process's budget of bytes held for slow readers, streams and exports (runtime/held-bytes.ts). */
  heldBytes: HeldBytes;
  /** The key that signs event-list cursors (features/events/read/cursor.ts: CURSOR_SECRET or the database's own). */
  cursorKey: Buffer;
  /** API keys: authentication, the verified-key cache, `last_used_at`, stream key watch (runtime/keys/api-keys.ts). */
  keys: ApiKeys;
  /** Every collector host in memory, kept by NOTIFY (runtime/collector/collector-hosts.ts). */
  collectorHosts: CollectorHostSet;
  /** The salt of cookieless visitor hashes, one per UTC day, deleted as its day ends (runtime/collector/daily-salt.ts). */
  visitorSalt: DailySalt;
  /** Deleted tags leave this process's tag caches at once, by NOTIFY or by a DELETE run here (runtime/collector/deleted-tags.ts). */
  deletedTags: DeletedTags;
  /** Webhook host names: bounded, cancellable lookups, shared by the URL check and the deliveries (runtime/webhook-host-resolver.ts). */
  webhookResolver: WebhookHostResolver;
}

export interface Context extends AppDeps {
  requestId: string;
  /** The raw Authorization header, authenticated by the partner middleware. */
  authorization: string | string[] | undefined;
  /** Set when the transport already authenticated the request and charged the key's budget. */
  partner: AuthenticatedPartner | null;
  /** The caller, for the rate-limit policy (runtime/rate-limits.ts); absent for in-process callers. */
  client?: RateLimitClient;
  /** True when the transport already charged the collector budget for this call (REST `/v1/collect`). */
  collectorCharged?: boolean;
  /** What the HTTP request tells of its visitor (`/v1/collect` keeps its client); absent in process. */
  visitor?: RequestVisitor;
}

/** What one call adds to the shared dependencies. */
export type RequestScope = Omit<Context, keyof AppDeps>;

/** One call's context: the shared dependencies and what the call adds. */
export function requestContext(deps: AppDeps, scope: RequestScope): Context {
  const context: Context = {
    requestId: '',
    authorization: undefined,
    partner: null,
    client: undefined,
    collectorCharged: undefined,
    visitor: undefined,
    ...deps,
  } satisfies Record<keyof RequestScope, unknown> & AppDeps;
  context.requestId = scope.requestId;
  context.authorization = scope.authorization;
  context.partner = scope.partner;
  context.client = scope.client;
  context.collectorCharged = scope.collectorCharged;
  context.visitor = scope.visitor;
  return context;
}
