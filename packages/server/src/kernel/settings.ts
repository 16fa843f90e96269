// The server's settings, each declared once (docs/decisions/settings.md): its group, its default as
// written in the environment, a one-line reason, and its type. env.ts parses the environment
// against it once at start; docs/settings.md is generated from it (`pnpm docs:settings`); the
// start-up line prints what differs from it (settings-summary.ts). Knobs that exist only for tests
// are not here: they are TestKnobs (test-knobs.ts), passed to the app factory, never read from the env.
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
 * `src/kernel/settings.ts` (tsx) and from the bundle in `dist/` (`node dist/main.js`).
 */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** Repository root (two levels above packages/server): `.data/`, the embedded database's default home, lives there. */
const REPO_ROOT = path.resolve(packageRoot(), '../..');

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

const HostName = z
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
 * TRUST_PROXY: off (`false`, `0`); `true` (every hop is a trusted proxy: deprecated, it believes
 * the client-written left-most hop; compose.ts warns at start); a hop count N (the N proxies
 * nearest to us are trusted); or a comma list of proxy addresses and CIDRs (also `loopback`,
 * `linklocal`, `uniquelocal`). transport/http/client-address.ts applies it.
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

const BooleanFlag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');
const OnOff = z.enum(['on', 'off']);
const Port = z.coerce.number().int().min(0).max(65535);
const Int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
/** A per-window budget: 0 switches it off. */
const Budget = z.coerce.number().int().min(0);
const PostgresUrl = z.string().regex(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// or postgresql:// URL' });

/** The groups of docs/settings.md, in its order, with their headings. */
export const SETTING_GROUPS = {
  server: 'Server',
  database: 'Database',
  ingestion: 'Ingestion',
  'event-log': 'Event log (NATS JetStream)',
  statistics: 'Statistics (ClickHouse)',
  'streams-exports': 'Event streams and exports',
  limits: 'Rate limits and quotas',
  'partner-caps': 'Per-partner caps',
  tags: 'Tags and DNS',
  webhooks: 'Webhooks',
  retention: 'Retention',
  security: 'Security and metrics',
} as const;

export type SettingGroup = keyof typeof SETTING_GROUPS;

export interface SettingSpec<T extends z.ZodType = z.ZodType> {
  group: SettingGroup;
  /** The value when unset or empty, as written in the environment; a function when it depends on the machine. */
  default?: string | (() => string);
  /** How docs/settings.md shows a default that depends on the machine, or the behaviour when unset. */
  defaultText?: string;
  /** Why it exists, or when to change it (one line). */
  reason: string;
  /** How the start-up line shows a value: `url` keeps scheme, host, port and path; `hidden` shows `(set)`. */
  redact?: 'url' | 'hidden';
  /** Parses the value as written in the environment (`.optional()` when there is no default). */
  type: T;
}

const setting = <T extends z.ZodType>(spec: SettingSpec<T>): SettingSpec<T> => spec;

export const SETTINGS = {
  // server
  NODE_ENV: setting({
    group: 'server',
    default: 'development',
    reason: '`production` disables the demo partner (otherwise onboarded on an empty embedded database).',
    type: z.enum(['development', 'test', 'production']),
  }),
  PORT: setting({
    group: 'server',
    default: '3000',
    reason: 'The HTTP port of the API (0: any free port).',
    type: Port,
  }),
  HOST: setting({
    group: 'server',
    default: '0.0.0.0',
    reason: 'The address the listeners bind; 127.0.0.1 keeps the server off the network.',
    type: z.string(),
  }),
  PUBLIC_BASE_URL: setting({
    group: 'server',
    defaultText: 'relative (`/`)',
    reason:
      'Server URL written into the OpenAPI document (unset: relative, so /docs calls the origin it was opened at).',
    type: z.url().optional(),
  }),
  COLLECTOR_PORT: setting({
    group: 'server',
    defaultText: 'none',
    reason:
      'A second port answering only collector hosts (the tag script and `POST /e`), to expose apart from the API.',
    type: Port.optional(),
  }),
  LOG_LEVEL: setting({
    group: 'server',
    default: 'info',
    reason: 'Log verbosity; `debug` also prints the stack of a failed start.',
    type: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  ROLE: setting({
    group: 'server',
    default: 'all',
    reason:
      '`api`: HTTP only; `writer`: drains the event log (and answers health checks); `all`: both. Needs EVENT_LOG_URL.',
    type: z.enum(['api', 'writer', 'all']),
  }),
  HTTP_HEADERS_TIMEOUT_MS: setting({
    group: 'server',
    default: '10000',
    reason: 'Slow-client protection on every port: time a client has to send the request headers (ms).',
    type: Int(100, 300_000),
  }),
  HTTP_REQUEST_TIMEOUT_MS: setting({
    group: 'server',
    default: '30000',
    reason: 'Slow-client protection on every port: time a client has to send the whole request (ms).',
    type: Int(100, 3_600_000),
  }),

  // database
  DATABASE_URL: setting({
    group: 'database',
    defaultText: 'embedded PGlite in DATA_DIR',
    reason: 'The PostgreSQL database (`postgres://...`); unset, the embedded PGlite serves one process.',
    redact: 'url',
    type: PostgresUrl.optional(),
  }),
  DATA_DIR: setting({
    group: 'database',
    default: () => path.join(REPO_ROOT, '.data'),
    defaultText: '`.data/` at the repository root',
    reason: 'Where the embedded PGlite and chDB keep their files (one process at a time).',
    type: z.string(),
  }),
  DATABASE_READ_URL: setting({
    group: 'database',
    defaultText: 'none',
    reason: 'A streaming replica of DATABASE_URL for the event list, the export and the statistics while it keeps up.',
    redact: 'url',
    type: PostgresUrl.optional(),
  }),
  DB_READ_MAX_LAG: setting({
    group: 'database',
    default: '5s',
    reason: 'Reads go back to the primary while the replica is further behind than this.',
    type: Duration(100),
  }),
  DB_READ_CHECK_INTERVAL: setting({
    group: 'database',
    default: '1s',
    reason: "How often the replica's lag is measured (also how soon a replica back up is used again).",
    type: Duration(100),
  }),
  DB_POOL_MAX: setting({
    group: 'database',
    default: () => String(2 * os.availableParallelism() + 2),
    defaultText: '2 x cores + 2',
    reason: 'PostgreSQL connections per process: enough to keep the cores busy; more only queue inside PostgreSQL.',
    type: Int(1, 500),
  }),
  DB_STATEMENT_TIMEOUT: setting({
    group: 'database',
    default: '5000',
    reason: 'statement_timeout of every pooled connection (ms); the client deadline adds 500 ms.',
    type: Int(100, 3_600_000),
  }),
  DB_LONG_STATEMENT_TIMEOUT: setting({
    group: 'database',
    default: '300000',
    reason: "statement_timeout of the migrations' own connection (ms): raise it for a migration on a large table.",
    type: Int(100, 86_400_000),
  }),

  // ingestion
  INGEST_QUEUE_MAX: setting({
    group: 'ingestion',
    default: '50000',
    reason: 'Events the process holds before the collectors answer 503 (bounds memory under a write stall).',
    type: Int(1, 10_000_000),
  }),
  INGEST_BATCH_MAX: setting({
    group: 'ingestion',
    default: '5000',
    reason: 'Events per insert statement.',
    type: Int(1, 100_000),
  }),
  INGEST_WRITERS: setting({
    group: 'ingestion',
    defaultText: 'cores, at most half of DB_POOL_MAX',
    reason: 'Direct-path inserts in flight per process (PGlite: always 1).',
    type: Int(1, 64).optional(),
  }),

  // event log
  EVENT_LOG_URL: setting({
    group: 'event-log',
    defaultText: 'none: direct group commit',
    reason:
      'NATS JetStream (`nats://host:port[,...]`): the collectors publish there and writers drain it into PostgreSQL.',
    redact: 'url',
    type: z
      .string()
      .regex(/^(nats|tls):\/\/[^,\s]+(,\s*(nats|tls):\/\/[^,\s]+)*$/, {
        message: 'must be nats://host:port (comma-separated for a cluster)',
      })
      .optional(),
  }),
  EVENT_LOG_PREFIX: setting({
    group: 'event-log',
    default: 'partner_tags',
    reason:
      "Names the deployment's stream (`<prefix>_EVENTS`), subjects and consumer: one per deployment on a shared NATS.",
    type: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { message: 'must be 1-64 letters, digits, _ or -' }),
  }),
  EVENT_LOG_MAX_BYTES: setting({
    group: 'event-log',
    default: '1073741824',
    reason: 'Stream size limit (1 GiB): the backlog a PostgreSQL outage can build; when full, collectors answer 503.',
    type: Int(1_048_576),
  }),
  EVENT_LOG_MAX_AGE_SECONDS: setting({
    group: 'event-log',
    default: '604800',
    reason: 'Stream age limit (7 days): events not drained into PostgreSQL by then are dropped.',
    type: Int(60),
  }),
  EVENT_LOG_DUPLICATE_WINDOW_SECONDS: setting({
    group: 'event-log',
    default: '600',
    reason: 'JetStream de-duplication window of a re-sent request (past it, the insert still stores it once).',
    type: Int(1),
  }),
  EVENT_LOG_REPLICAS: setting({
    group: 'event-log',
    default: '1',
    reason: 'Copies of the stream in the NATS cluster (3 to survive the loss of a node).',
    type: Int(1, 5),
  }),
  EVENT_LOG_PUBLISH_TIMEOUT_MS: setting({
    group: 'event-log',
    default: '1200',
    reason: 'A publish with no ack within this many ms answers the collector 503.',
    type: Int(100, 10_000),
  }),
  EVENT_LOG_ACK_WAIT_SECONDS: setting({
    group: 'event-log',
    default: '30',
    reason: "Seconds before a writer's unacknowledged batch is redelivered (to another writer).",
    type: Int(1, 3600),
  }),
  EVENT_LOG_MAX_ACK_PENDING: setting({
    group: 'event-log',
    default: '20000',
    reason: 'Messages the consumer lets writers hold unacknowledged.',
    type: Int(1),
  }),
  EVENT_LOG_WRITERS: setting({
    group: 'event-log',
    default: '1',
    reason: 'Writers per process, each with its own pull buffer and one insert at a time.',
    type: Int(1, 64),
  }),

  // statistics
  STATS: setting({
    group: 'statistics',
    default: 'on',
    reason:
      '`off`: no statistics in this process (events are stored as usual; the stats endpoints answer 503 STATS_OFF).',
    type: OnOff,
  }),
  STATS_NOTICES: setting({
    group: 'statistics',
    default: 'on',
    reason: '`off`: this process sends no `stats.digest` or `stats.spike` webhooks (jobs/stats-notices.ts).',
    type: OnOff,
  }),
  CLICKHOUSE_URL: setting({
    group: 'statistics',
    defaultText: 'chDB in DATA_DIR/clickhouse',
    reason: 'A ClickHouse server (`http://host:8123/database`, 24.8+): needed for statistics with several processes.',
    redact: 'url',
    type: z
      .string()
      .regex(/^https?:\/\//, { message: 'must be an http:// or https:// URL' })
      .optional(),
  }),

  // event streams and exports
  STREAM_MAX_PER_PARTNER: setting({
    group: 'streams-exports',
    default: '100',
    reason: 'Concurrent event streams (REST SSE and tRPC) per partner and process; over: 429.',
    type: Int(1, 100_000),
  }),
  STREAM_MAX_PER_PROCESS: setting({
    group: 'streams-exports',
    default: '10000',
    reason: 'Concurrent event streams per process; over: 429.',
    type: Int(1, 1_000_000),
  }),
  STREAM_BUFFER_LIMIT: setting({
    group: 'streams-exports',
    default: '10000',
    reason: 'Events a stream may hold unsent before it is cut off as too slow.',
    type: Int(1, 1_000_000),
  }),
  STREAM_BUFFER_BYTES: setting({
    group: 'streams-exports',
    default: '8388608',
    reason: "Bytes held for a stream's unsent events (8 MiB) before it is cut off as too slow.",
    type: Int(65_536, 1_073_741_824),
  }),
  STREAM_PING_MS: setting({
    group: 'streams-exports',
    default: '15000',
    reason: "Interval of the REST stream's keep-alive `: ping` (ms): below the idle timeout of any proxy in front.",
    type: Int(10, 300_000),
  }),
  HELD_BYTES: setting({
    group: 'streams-exports',
    default: '268435456',
    reason:
      'Bytes the process may hold for slow readers, streams and exports together (256 MiB); over: the most stalled end.',
    type: Int(1_048_576, 68_719_476_736),
  }),
  EXPORT_MAX_PER_PARTNER: setting({
    group: 'streams-exports',
    default: '4',
    reason: 'Concurrent exports per partner and process; over: 429.',
    type: Int(1, 10_000),
  }),
  EXPORT_MAX_PER_PROCESS: setting({
    group: 'streams-exports',
    default: '32',
    reason: 'Concurrent exports per process; over: 429.',
    type: Int(1, 100_000),
  }),
  EXPORT_BATCH_BYTES: setting({
    group: 'streams-exports',
    default: '2097152',
    reason: 'Bytes one export batch aims at (2 MiB); rows per batch follow from the last batch.',
    type: Int(16_384, 268_435_456),
  }),

  // rate limits and quotas
  RATE_LIMIT_PER_MINUTE: setting({
    group: 'limits',
    default: '600',
    reason: 'Calls per minute per API key on /v1/partners/* and /trpc, each call of a batch counted (0: no limit).',
    type: Budget,
  }),
  SESSION_RATE_LIMIT_PER_MINUTE: setting({
    group: 'limits',
    default: '120',
    reason: 'Calls per minute per merchant session token, also charged to its key (0: no limit).',
    type: Budget,
  }),
  COLLECT_RATE_LIMIT_PER_MINUTE: setting({
    group: 'limits',
    default: '6000',
    reason: 'Calls per minute per client IP on the public collectors, every way in (0: no limit).',
    type: Budget,
  }),
  COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: setting({
    group: 'limits',
    default: '60000000',
    reason: 'Request body bytes per minute per client address on the collectors (0: no limit).',
    type: Budget,
  }),
  COLLECT_TAG_EVENTS_PER_MINUTE: setting({
    group: 'limits',
    default: '60000',
    reason: 'Events per minute per live tag, whatever the address (0: no limit).',
    type: Budget,
  }),
  COLLECT_TAG_BYTES_PER_MINUTE: setting({
    group: 'limits',
    default: '300000000',
    reason: "Stored bytes (each event's data and name) per minute per live tag (0: no limit).",
    type: Budget,
  }),
  COLLECT_TAG_EVENTS_PER_DAY: setting({
    group: 'limits',
    default: '25000000',
    reason: 'Events per 24 hours per live tag (0: no limit).',
    type: Budget,
  }),
  COLLECT_TAG_BYTES_PER_DAY: setting({
    group: 'limits',
    default: '25000000000',
    reason: 'Stored bytes per 24 hours per live tag (0: no limit).',
    type: Budget,
  }),
  AUTH_FAILURE_LIMIT_PER_MINUTE: setting({
    group: 'limits',
    default: '60',
    reason: 'Failed authentications per minute per client address (IPv6: /64) before unseen keys are answered 429.',
    type: Budget,
  }),
  AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE: setting({
    group: 'limits',
    default: '60',
    reason: 'Failed authentications per minute with one presented key before it is answered 429 unread.',
    type: Budget,
  }),
  REDIS_URL: setting({
    group: 'limits',
    defaultText: 'in memory, per process',
    reason: 'Shares the rate-limit budgets across instances (`redis://` or `rediss://`).',
    redact: 'url',
    type: z
      .string()
      .regex(/^rediss?:\/\//, { message: 'must be a redis:// or rediss:// URL' })
      .optional(),
  }),
  RATE_LIMIT_KEY_PREFIX: setting({
    group: 'limits',
    default: 'pt-rl',
    reason: 'Prefix of the rate-limit keys in Redis: one per deployment sharing a Redis.',
    type: z.string().min(1).max(100),
  }),

  // per-partner caps
  MAX_MERCHANTS_PER_PARTNER: setting({
    group: 'partner-caps',
    default: '100000',
    reason: 'Merchants one partner may own; over: 409 LIMIT_EXCEEDED.',
    type: Int(1, 100_000_000),
  }),
  MAX_CUSTOM_TAGS_PER_PARTNER: setting({
    group: 'partner-caps',
    default: '10000',
    reason: 'Custom-domain tags one partner may own (each is DNS work for the monitor); over: 409.',
    type: Int(1, 100_000_000),
  }),
  MAX_WEBHOOK_ENDPOINTS_PER_PARTNER: setting({
    group: 'partner-caps',
    default: '20',
    reason: 'Webhook endpoints one partner may own (each multiplies deliveries); over: 409.',
    type: Int(1, 100_000),
  }),
  WEBHOOK_TEST_CALLS_PER_PARTNER: setting({
    group: 'partner-caps',
    default: '60',
    reason: 'Webhook test events (`POST /v1/partners/webhooks/{id}/test`) per partner per minute; over: 429.',
    type: Int(1, 1_000_000),
  }),

  // tags and DNS
  TAG_TARGET_HOST: setting({
    group: 'tags',
    default: 'tags.partner-tags.example',
    reason: 'Custom tags CNAME to `<label>.<host>`: serve `*.<host>` and `<host>` at the collector.',
    type: HostName,
  }),
  DNS_SERVERS: setting({
    group: 'tags',
    defaultText: "the system's resolvers",
    reason: 'Resolvers for tag verification and webhook hosts (`ip[:port]`, comma-separated).',
    type: DnsServers.optional(),
  }),
  DNS_TIMEOUT_MS: setting({
    group: 'tags',
    default: '3000',
    reason: 'Budget of one DNS query (one retry at most); a whole tag check takes at most twice this.',
    type: Int(100, 30_000),
  }),
  TAG_MONITOR: setting({
    group: 'tags',
    default: 'on',
    reason: '`off` stops the background DNS checks of tags in this process (another process runs them).',
    type: OnOff,
  }),
  TAG_RECHECK_SCHEDULE: setting({
    group: 'tags',
    default: '1m,5m,15m,1h,6h,24h',
    reason: 'Pauses between the re-checks of an unverified custom tag; the last repeats until TAG_RECHECK_WINDOW.',
    type: DurationList,
  }),
  TAG_RECHECK_WINDOW: setting({
    group: 'tags',
    default: '7d',
    reason: 'How long after generate (or a manual verify) an unverified tag keeps being re-checked.',
    type: Duration(1000),
  }),
  TAG_HEALTH_INTERVAL: setting({
    group: 'tags',
    default: '24h',
    reason: 'Interval of the health checks of verified custom tags.',
    type: Duration(100),
  }),

  // webhooks
  WEBHOOK_DELIVERY: setting({
    group: 'webhooks',
    default: 'on',
    reason: '`off` sends nothing from this process (messages still queue in the database for the others).',
    type: OnOff,
  }),
  WEBHOOK_RETRY_SCHEDULE: setting({
    group: 'webhooks',
    default: '5s,5m,30m,2h,5h,10h,10h',
    reason: 'Pauses before each retry of a failed delivery (8 attempts over about 28 h); after the last: `failed`.',
    type: DurationList,
  }),
  WEBHOOK_TIMEOUT_MS: setting({
    group: 'webhooks',
    default: '10000',
    reason: 'An attempt with no complete 2xx answer within this many ms fails.',
    type: Int(100, 60_000),
  }),
  WEBHOOK_CONCURRENCY: setting({
    group: 'webhooks',
    default: '32',
    reason: 'Webhook requests in flight per process.',
    type: Int(1, 1000),
  }),
  WEBHOOK_ENDPOINT_CONCURRENCY: setting({
    group: 'webhooks',
    default: '4',
    reason: 'Requests in flight per endpoint (one at a time after an attempt got no answer).',
    type: Int(1, 100),
  }),
  WEBHOOK_PARTNER_CONCURRENCY: setting({
    group: 'webhooks',
    default: '16',
    reason: "Requests in flight per partner and process at most: one partner's backlog cannot take every slot.",
    type: Int(1, 1000),
  }),
  WEBHOOK_DNS_CONCURRENCY: setting({
    group: 'webhooks',
    default: '8',
    reason: 'Webhook host lookups in flight per process; as many more wait, beyond that they are refused.',
    type: Int(1, 256),
  }),
  WEBHOOK_ALLOW_PRIVATE_URLS: setting({
    group: 'webhooks',
    default: 'false',
    reason: '`true` allows http URLs and loopback/private addresses: development and the examples only.',
    type: BooleanFlag,
  }),

  // retention
  EVENT_RETENTION_DAYS: setting({
    group: 'retention',
    defaultText: 'kept forever',
    reason: "Days a merchant's events are kept when neither the merchant nor its partner sets a period.",
    type: Int(1, 3650).optional(),
  }),
  EVENT_RETENTION: setting({
    group: 'retention',
    default: 'on',
    reason: '`off` runs no retention pass in this process (others still do).',
    type: OnOff,
  }),
  EVENT_RETENTION_INTERVAL: setting({
    group: 'retention',
    default: '1h',
    reason: 'Each merchant with a retention period gets a pass this often.',
    type: Duration(1000),
  }),
  WEBHOOK_RETENTION: setting({
    group: 'retention',
    default: '30d',
    reason: 'Webhook messages older than this are deleted with their deliveries once none is pending (at least 1h).',
    type: Duration(3_600_000),
  }),

  // security and metrics
  TRUST_PROXY: setting({
    group: 'security',
    default: 'false',
    reason: 'Behind a proxy: whose X-Forwarded-For/-Proto to believe (`true`, a hop count, or addresses/CIDRs).',
    type: TrustProxySetting,
  }),
  CURSOR_SECRET: setting({
    group: 'security',
    defaultText: 'a key kept in the database',
    reason: 'Signs event-list cursors (32+ characters); changing it voids open cursors.',
    redact: 'hidden',
    type: z.string().min(32).max(512).optional(),
  }),
  METRICS_PORT: setting({
    group: 'security',
    defaultText: 'none',
    reason: 'A port serving only GET /metrics (Prometheus) without a token: keep it private.',
    type: Port.optional(),
  }),
  METRICS_TOKEN: setting({
    group: 'security',
    defaultText: 'not on the main port',
    reason: 'Serves GET /metrics on the main port to `Authorization: Bearer <token>` (16+ characters).',
    redact: 'hidden',
    type: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
  }),
};

export type SettingName = keyof typeof SETTINGS;

/** The default of a setting as written in the environment (undefined: none). */
export function defaultOf(spec: SettingSpec): string | undefined {
  return typeof spec.default === 'function' ? spec.default() : spec.default;
}
