import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { parseDuration } from './duration.js';

/**
 * The server package's directory (the nearest `package.json` above this module): the same from
 * `src/kernel/env.ts` (tsx) and from the bundle in `dist/` (`node dist/main.js`).
 */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** Repository root (two levels above packages/server): `.data/`, the embedded database's default home, lives there. */
const REPO_ROOT = path.resolve(packageRoot(), '../..');

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);

const defaultPoolMax = () => 2 * os.availableParallelism() + 2;

/** `ip[:port]` entries, comma-separated; IPv6 with a port as `[::1]:5353`. */
const DnsServers = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  )
  .refine(
    (entries) =>
      entries.every((entry) => {
        const v6 = /^\[(.+)\](?::(\d+))?$/.exec(entry);
        const [host, port] = v6 ? [v6[1], v6[2]] : (entry.split(':') as [string, string?]);
        if (!host || isIP(host) === 0) return isIP(entry) === 6;
        return port === undefined || (/^\d+$/.test(port) && Number(port) > 0 && Number(port) < 65536);
      }),
    { message: 'must be comma-separated ip[:port] entries, e.g. 1.1.1.1,127.0.0.1:5353' },
  );

const hostName = z
  .string()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]$/i, {
    message: 'must be a host name such as tags.example.com',
  })
  .transform((value) => value.toLowerCase());

/** A duration such as `90s`, `15m`, `24h`, `7d` (or a bare number of seconds), in milliseconds. */
const Duration = (min: number) =>
  z.string().transform((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === null || ms < min) {
      ctx.addIssue({ code: 'custom', message: `must be a duration of at least ${min} ms, e.g. 90s, 15m, 24h, 7d` });
      return z.NEVER;
    }
    return ms;
  });

/** Comma-separated durations, e.g. `1m,5m,15m,1h,6h,24h`, in milliseconds. */
const DurationList = z.string().transform((value, ctx) => {
  const parts = value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const ms = parts.map(parseDuration);
  if (parts.length === 0 || parts.length > 50 || ms.some((v) => v === null || v < 100)) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be 1..50 comma-separated durations of at least 100ms, e.g. 1m,5m,1h',
    });
    return z.NEVER;
  }
  return ms as number[];
});

/**
 * TRUST_PROXY: off (unset, `false`, `0`); `true` (every hop is a trusted proxy: deprecated, it
 * believes the client-written left-most hop; app.ts warns at start); a hop count N
 * (the N proxies nearest to us are trusted); or a comma list of proxy addresses and CIDRs (also
 * `loopback`, `linklocal`, `uniquelocal`). transport/http/client-address.ts applies it.
 */
export type TrustProxy =
  | { kind: 'off' }
  | { kind: 'all' }
  | { kind: 'hops'; hops: number }
  | { kind: 'list'; list: string[] };

const TrustProxySetting = z.string().transform((value, ctx): TrustProxy => {
  const trimmed = value.trim().toLowerCase();
  if (trimmed === '' || trimmed === 'false' || trimmed === '0') return { kind: 'off' };
  if (trimmed === 'true') return { kind: 'all' };
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed);
    if (hops <= 100) return { kind: 'hops', hops };
  }
  const list = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  try {
    if (list.length === 0) throw new Error('empty');
    proxyAddr.compile(list);
    return { kind: 'list', list };
  } catch {
    ctx.addIssue({
      code: 'custom',
      message:
        'must be true, false, a hop count (1..100), or comma-separated proxy addresses/CIDRs, e.g. 10.0.0.0/8,loopback',
    });
    return z.NEVER;
  }
});

const booleanFlag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).default(3000)),
  HOST: z.preprocess(emptyAsUndefined, z.string().default('0.0.0.0')),
  DATABASE_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// or postgresql:// URL' })
      .optional(),
  ),
  DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default(path.join(REPO_ROOT, '.data'))),
  /**
   * A PostgreSQL streaming replica of DATABASE_URL: the event list, the export and the statistics
   * read there while it is up and close enough (db/read-routing.ts); everything else stays on the
   * primary. Needs DATABASE_URL (the embedded PGlite has no replica).
   */
  DATABASE_READ_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// or postgresql:// URL' })
      .optional(),
  ),
  /** Reads go to the primary while the replica is further behind than this. */
  DB_READ_MAX_LAG: z.preprocess(emptyAsUndefined, Duration(100).default(5_000)),
  /** How often the replica's lag is measured (also how soon a replica back up is used again). */
  DB_READ_CHECK_INTERVAL: z.preprocess(emptyAsUndefined, Duration(100).default(1_000)),
  TAG_TARGET_HOST: z.preprocess(emptyAsUndefined, hostName.default('tags.partner-tags.example')),
  DNS_SERVERS: z.preprocess(emptyAsUndefined, DnsServers.optional()),
  DNS_TIMEOUT_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(100).max(30_000).default(3000)),
  /**
   * Webhook host lookups in flight per process (runtime/webhook-host-resolver.ts, through
   * DNS_SERVERS within DNS_TIMEOUT_MS); as many more wait for a slot, beyond that they are refused.
   */
  WEBHOOK_DNS_CONCURRENCY: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(256).default(8)),
  LOG_LEVEL: z.preprocess(
    emptyAsUndefined,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
  PUBLIC_BASE_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
  /**
   * PostgreSQL connections per process. Default 2 x cores + 2 (6 on two cores): enough to keep the
   * cores busy while some connections wait on the network; more only queue inside PostgreSQL.
   */
  DB_POOL_MAX: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(500).default(defaultPoolMax())),
  /**
   * statement_timeout of every pooled PostgreSQL connection (ms); the client-side deadline of each
   * query is this + 500 ms (it also covers a connection that went silent). db/deadline.ts.
   */
  DB_STATEMENT_TIMEOUT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(100).max(3_600_000).default(5_000)),
  /** statement_timeout of the migrations' own connection (ms); its client deadline adds 500 ms (db/client.ts). */
  DB_LONG_STATEMENT_TIMEOUT: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(100).max(86_400_000).default(300_000),
  ),
  /** A port serving only GET /metrics (Prometheus), without a token: keep it private. Unset: none. */
  METRICS_PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).optional()),
  /** Serves GET /metrics on the main port to `Authorization: Bearer <token>`. Unset: not on the main port. */
  METRICS_TOKEN: z.preprocess(
    emptyAsUndefined,
    z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
  ),
  /** Concurrent event streams (REST SSE and tRPC) per partner and per process; over: 429 RATE_LIMITED. */
  STREAM_MAX_PER_PARTNER: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(100_000).default(100)),
  STREAM_MAX_PER_PROCESS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(1_000_000).default(10_000)),
  /** Event stream: events a connection may hold unsent before it is cut off as too slow. */
  STREAM_BUFFER_LIMIT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(1_000_000).default(10_000)),
  /** Event stream: interval of the keep-alive `: ping` comments (ms). */
  STREAM_PING_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(10).max(300_000).default(15_000)),
  /** Event stream: bytes held for a connection's unsent events (each twice its JSON) before it is cut off as too slow (8 MiB). */
  STREAM_BUFFER_BYTES: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(65_536).max(1_073_741_824).default(8_388_608),
  ),
  /**
   * Bytes the process may hold for slow readers, event streams and exports together (256 MiB); over
   * it, the readers holding the most are ended (docs/decisions/held-memory.md).
   */
  HELD_BYTES: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1_048_576).max(68_719_476_736).default(268_435_456),
  ),
  /** Concurrent exports (GET /v1/partners/events/export) per partner and per process; over: 429 RATE_LIMITED. */
  EXPORT_MAX_PER_PARTNER: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(10_000).default(4)),
  EXPORT_MAX_PER_PROCESS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(100_000).default(32)),
  /** Export: the bytes one batch aims at (rows per batch follow from the last batch's row size; 2 MiB). */
  EXPORT_BATCH_BYTES: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(16_384).max(268_435_456).default(2_097_152),
  ),
  /** Calls per window per API key on /v1/partners/* and /trpc, each call of a tRPC batch counted (0: no limit). */
  RATE_LIMIT_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(600)),
  /** Calls per window per merchant session token (each also counts against the key that created it) (0: no limit). */
  SESSION_RATE_LIMIT_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(120)),
  /** Calls per window per client IP on the public collectors, every way in (`/v1/collect`, `collect.ingest`, `/e`) (0: no limit). */
  COLLECT_RATE_LIMIT_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(6000)),
  /** Failed authentications per window per client address (IPv6: /64); past it, keys this process has not seen authenticate are answered 429 (0: no limit). */
  AUTH_FAILURE_LIMIT_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(60)),
  /** Failed authentications per window with one presented key (by its hash) before it is answered 429 unread (0: no limit). */
  AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(60)),
  /**
   * Collector quotas by volume (issue 30 finding 6), per live tag whatever the address: events and
   * stored bytes (each event's `data` JSON and name) per window, and per 24 hours (0: no limit).
   */
  COLLECT_TAG_EVENTS_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(60_000)),
  COLLECT_TAG_BYTES_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(300_000_000)),
  COLLECT_TAG_EVENTS_PER_DAY: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(25_000_000)),
  COLLECT_TAG_BYTES_PER_DAY: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).default(25_000_000_000)),
  /** Request body bytes per window per client address on the collectors (declared Content-Length; 0: no limit). */
  COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(0).default(60_000_000),
  ),
  /** Length of the rate-limit window; the per-window budgets above are per window (60 s: per minute). Tests shorten it. */
  RATE_LIMIT_WINDOW_SECONDS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(3600).default(60)),
  /**
   * Behind a proxy or load balancer: whose X-Forwarded-For / X-Forwarded-Proto to believe (the
   * client address of the rate limits and collectors; https for the `muid` cookie). Off by default:
   * no forwarding header is read.
   */
  TRUST_PROXY: z.preprocess(emptyAsUndefined, TrustProxySetting.default({ kind: 'off' })),
  /** Shares rate-limit budgets across instances; unset: in memory, per process. */
  REDIS_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^rediss?:\/\//, { message: 'must be a redis:// or rediss:// URL' })
      .optional(),
  ),
  /** Prefix of the rate-limit keys in Redis (one per deployment or test run). */
  RATE_LIMIT_KEY_PREFIX: z.preprocess(emptyAsUndefined, z.string().min(1).max(100).default('pt-rl')),
  /** A second port answering only collector hosts (the tag script and `POST /e`); unset: none. */
  COLLECTOR_PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).optional()),
  /** Slow-client protection on every port: time to send the headers, and the whole request (ms). */
  HTTP_HEADERS_TIMEOUT_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(100).max(300_000).default(10_000),
  ),
  HTTP_REQUEST_TIMEOUT_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  ),
  /** Event queue: events held at once before 503, events per insert, wait for more (ms). */
  INGEST_QUEUE_MAX: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(10_000_000).default(50_000)),
  INGEST_BATCH_MAX: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(100_000).default(5_000)),
  /** Direct-path inserts in flight per process (PGlite: always 1); unset: cores, at most half the pool (compose.ts). */
  INGEST_WRITERS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(64).optional()),
  /**
   * Signs event-list cursors (at least 32 characters); unset: a key made once and kept in the
   * database (table server_secrets), shared by every process on it. Changing it voids open cursors.
   */
  CURSOR_SECRET: z.preprocess(emptyAsUndefined, z.string().min(32).max(512).optional()),
  INGEST_FLUSH_DELAY_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(10_000).default(0)),
  /**
   * The durable event log (NATS JetStream): `nats://host:port[,nats://...]`. Set: the collectors
   * publish to the log and writers drain it into PostgreSQL. Unset: direct group commit.
   */
  EVENT_LOG_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^(nats|tls):\/\/[^,\s]+(,\s*(nats|tls):\/\/[^,\s]+)*$/, {
        message: 'must be nats://host:port (comma-separated for a cluster)',
      })
      .optional(),
  ),
  /** Names the deployment's stream (`<prefix>_EVENTS`), subjects and consumer. */
  EVENT_LOG_PREFIX: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, { message: 'must be 1-64 letters, digits, _ or -' })
      .default('partner_tags'),
  ),
  EVENT_LOG_MAX_BYTES: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1_048_576).default(1_073_741_824)),
  EVENT_LOG_MAX_AGE_SECONDS: z.preprocess(
    emptyAsUndefined,
    z.coerce
      .number()
      .int()
      .min(60)
      .default(7 * 24 * 3600),
  ),
  EVENT_LOG_DUPLICATE_WINDOW_SECONDS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).default(600)),
  EVENT_LOG_REPLICAS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(5).default(1)),
  EVENT_LOG_PUBLISH_TIMEOUT_MS: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(100).max(10_000).default(1_200),
  ),
  EVENT_LOG_ACK_WAIT_SECONDS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(3600).default(30)),
  EVENT_LOG_MAX_ACK_PENDING: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).default(20_000)),
  /** Writers per process (each its own pull buffer and insert at a time). */
  EVENT_LOG_WRITERS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(64).default(1)),
  /** api: HTTP only; writer: drains the log (HTTP answers too: health checks); all: both. */
  ROLE: z.preprocess(emptyAsUndefined, z.enum(['api', 'writer', 'all']).default('all')),
  /** `off`: no statistics in this process (events are stored as usual; the stats endpoints answer 503 STATS_OFF). */
  STATS: z.preprocess(emptyAsUndefined, z.enum(['on', 'off']).default('on')),
  /**
   * The statistics' ClickHouse server (`http://host:8123/database`, 24.8 or later). Unset: chDB in
   * this process, in DATA_DIR/clickhouse, which one process at a time can open: a deployment of
   * several processes (ROLE api or writer) needs it for statistics.
   */
  CLICKHOUSE_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^https?:\/\//, { message: 'must be an http:// or https:// URL' })
      .optional(),
  ),
  /** The statistics' webhooks (jobs/stats-notices.ts): `off`: this process sends no `stats.digest` or `stats.spike`. */
  STATS_NOTICES: z.preprocess(emptyAsUndefined, z.enum(['on', 'off']).default('on')),
  /** Tag monitor (jobs/tag-monitor.ts): `off` stops the background DNS checks of this process. */
  TAG_MONITOR: z.preprocess(emptyAsUndefined, z.enum(['on', 'off']).default('on')),
  /** Intervals between the re-checks of an unverified custom tag; the last one repeats until TAG_RECHECK_WINDOW. */
  TAG_RECHECK_SCHEDULE: z.preprocess(
    emptyAsUndefined,
    DurationList.default([60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000]),
  ),
  /** How long after generate (or a manual verify) an unverified tag keeps being re-checked. */
  TAG_RECHECK_WINDOW: z.preprocess(emptyAsUndefined, Duration(1000).default(7 * 86_400_000)),
  /** Interval of the health checks of verified custom tags. */
  TAG_HEALTH_INTERVAL: z.preprocess(emptyAsUndefined, Duration(100).default(86_400_000)),
  /**
   * Webhooks: pauses before each retry of a failed delivery; after the last one it is `failed`.
   * Default 5s,5m,30m,2h,5h,10h,10h (8 attempts over about 28 h).
   */
  WEBHOOK_RETRY_SCHEDULE: z.preprocess(
    emptyAsUndefined,
    DurationList.default([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]),
  ),
  /** Webhooks: `true` allows http URLs and loopback/private addresses (development and tests only). */
  WEBHOOK_ALLOW_PRIVATE_URLS: z.preprocess(emptyAsUndefined, booleanFlag.default(false)),
  /** Webhooks: an attempt that has no complete 2xx answer within this many ms fails. */
  WEBHOOK_TIMEOUT_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(100).max(60_000).default(10_000)),
  /** Webhooks: requests in flight per process, and per endpoint (one at a time after an attempt got no answer, until one is answered). */
  WEBHOOK_CONCURRENCY: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(1000).default(32)),
  WEBHOOK_ENDPOINT_CONCURRENCY: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(100).default(4)),
  /**
   * Webhooks: requests in flight per partner and process at most (docs/decisions/fairness-between-partners.md, from "Security round
   * 2: fairness between partners"); below it, each partner's share is WEBHOOK_CONCURRENCY / partners with work.
   */
  WEBHOOK_PARTNER_CONCURRENCY: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(1000).default(16)),
  /** Per-partner caps: over one, a create is refused with 409 LIMIT_EXCEEDED naming the cap. */
  MAX_MERCHANTS_PER_PARTNER: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(100_000_000).default(100_000),
  ),
  MAX_CUSTOM_TAGS_PER_PARTNER: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(100_000_000).default(10_000),
  ),
  MAX_WEBHOOK_ENDPOINTS_PER_PARTNER: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(100_000).default(20),
  ),
  /** Test events (POST /v1/partners/webhooks/{id}/test) per partner per WEBHOOK_TEST_WINDOW; over: 429 RATE_LIMITED. */
  WEBHOOK_TEST_CALLS_PER_PARTNER: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(1_000_000).default(60),
  ),
  WEBHOOK_TEST_WINDOW: z.preprocess(emptyAsUndefined, Duration(1000).default(60_000)),
  /** Webhooks: how often a process looks for due deliveries when no commit woke it (ms). */
  WEBHOOK_POLL_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(10).max(600_000).default(1_000)),
  /**
   * Webhooks: messages created longer ago than this are deleted with their deliveries once none of
   * them is pending (the delivery log reaches this far back). Default 30d; at least 1h.
   */
  WEBHOOK_RETENTION: z.preprocess(emptyAsUndefined, Duration(3_600_000).default(30 * 86_400_000)),
  /**
   * Event retention: days a merchant's events are kept when neither the merchant nor its partner
   * sets a period (docs/decisions/data-deletion.md). Unset: kept forever.
   */
  EVENT_RETENTION_DAYS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(3650).optional()),
  /** Event retention: `off` runs no retention pass in this process (others still do). */
  EVENT_RETENTION: z.preprocess(emptyAsUndefined, z.enum(['on', 'off']).default('on')),
  /** Event retention: each merchant with a period gets a pass this often (the job looks as often, at most every 30 s). */
  EVENT_RETENTION_INTERVAL: z.preprocess(emptyAsUndefined, Duration(1000).default(3_600_000)),
  /** Webhooks: `off` sends nothing from this process (messages still queue in the database). */
  WEBHOOK_DELIVERY: z.preprocess(emptyAsUndefined, z.enum(['on', 'off']).default('on')),
});

export type Env = z.infer<typeof EnvSchema>;

export class EnvError extends Error {
  override name = 'EnvError';
}

/** Parses the environment once; a bad value throws an EnvError naming every offending variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const result = EnvSchema.safeParse(source);
  if (result.success && result.data.ROLE !== 'all' && !result.data.EVENT_LOG_URL) {
    throw new EnvError(
      `Invalid configuration:\n  ROLE: ${result.data.ROLE} needs EVENT_LOG_URL (without the log, every process writes its own events)`,
    );
  }
  if (result.success && result.data.DATABASE_READ_URL && !result.data.DATABASE_URL) {
    throw new EnvError(
      'Invalid configuration:\n  DATABASE_READ_URL: needs DATABASE_URL (a replica of a PostgreSQL primary; the embedded PGlite has none)',
    );
  }
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new EnvError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}
