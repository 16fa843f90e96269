import { sql } from 'drizzle-orm';
import { AppError, databaseUnavailability, isConnectionError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import type { Database } from './client.js';
import { readRows } from './read-rows.js';

/** Reads that may be served by a streaming replica: the event list, the export and the statistics. */
export type ReadRoute = 'events_list' | 'events_export' | 'stats';
const ROUTES: readonly ReadRoute[] = ['events_list', 'events_export', 'stats'];

/** Why a read went to the primary although a replica is configured. */
type FallbackReason = 'down' | 'lagging' | 'behind' | 'error' | 'confirm';
const REASONS: readonly FallbackReason[] = ['down', 'lagging', 'behind', 'error', 'confirm'];

/** What only the primary may decide for a read a replica serves, asked there first. */
export type PrimaryCheck = (primary: Database, recentMs: number) => Promise<boolean>;

export interface ReadOptions {
  /** The replica must have replayed everything the primary committed before this call. */
  caughtUp?: boolean;
  /** Asked on the primary before a replica read (not without a replica: the read is the primary's). */
  primaryCheck?: PrimaryCheck;
}

/** Where a read runs: `run` picks the replica or the primary per call; `primary` is for what must be the primary. */
export interface ReadDb {
  readonly primary: Database;
  run<T>(route: ReadRoute, read: (db: Database) => Promise<T>, options?: ReadOptions): Promise<T>;
}

/** No replica (DATABASE_READ_URL unset, or PGlite): every read on the primary. */
export function primaryReads(primary: Database): ReadDb {
  return { primary, run: (_route, read) => read(primary) };
}

/** How long a lag probe may take on each side before the replica counts as down (ms). */
const PROBE_TIMEOUT_MS = 1_000;
/** How long a read that needs the primary's latest commits waits for the replica to replay them (ms). */
const CATCH_UP_WAIT_MS = 200;
const CATCH_UP_POLL_MS = 5;
/** Primary WAL positions kept for the lag in seconds (one per check). */
const SAMPLES = 120;
/** Beside the lag bound, for a commit's time read from the clock its transaction started on. */
const RECENT_MARGIN_MS = 1_000;

/** A WAL position `X/Y` (hex) as a number of bytes. */
export function lsnBytes(lsn: string): bigint {
  const [high = '0', low = '0'] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** Seconds the replica is behind at most, from the primary's positions sampled at each check. */
export function lagSeconds(
  now: number,
  samples: readonly { at: number; lsn: bigint }[],
  replay: bigint,
  replayAge: number | null,
): number {
  const newest = samples[samples.length - 1];
  if (!newest || replay >= newest.lsn) return 0;
  let lag = Number.POSITIVE_INFINITY;
  for (let i = samples.length - 1; i >= 0; i--) {
    const sample = samples[i] as { at: number; lsn: bigint };
    if (sample.lsn <= replay) {
      lag = (now - sample.at) / 1000;
      break;
    }
  }
  return replayAge === null ? lag : Math.min(lag, Math.max(0, replayAge));
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} timed out`), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([promise, cut]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A replica failure that the primary may not have: unreachable, too slow, or a conflict with recovery (40001). */
function replicaFailed(error: unknown): boolean {
  if (databaseUnavailability(error) !== null) return true;
  for (let e = error as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === '40001') return true;
  }
  return false;
}

export interface ReplicaReadsOptions {
  primary: Database;
  replica: Database;
  /** One connection of its own on each side for the lag check. Absent: the pools. */
  probes?: { primary: Database; replica: Database } | undefined;
  /** Further behind than this (ms), reads go to the primary (DB_READ_MAX_LAG). */
  maxLagMs: number;
  /** How often the lag is measured (ms) (DB_READ_CHECK_INTERVAL). */
  checkIntervalMs: number;
  logger: Logger;
  metrics: Metrics;
}

type State = 'unknown' | 'up' | 'down' | 'lagging';

/** Routes reads between the primary and a streaming replica by the replica's health. */
export class ReplicaReads implements ReadDb {
  readonly primary: Database;
  private readonly replica: Database;
  private state: State = 'unknown';
  private checkedAt = 0;
  private lag = { seconds: Number.NaN, bytes: Number.NaN };
  private readonly samples: { at: number; lsn: bigint }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private stopped = false;
  private readonly reads;
  private readonly fallbacks;
  /** A commit older than this is on the replica whenever it is used. */
  private readonly recentMs: number;

  constructor(private readonly options: ReplicaReadsOptions) {
    this.primary = options.primary;
    this.replica = options.replica;
    this.recentMs = options.maxLagMs + 3 * options.checkIntervalMs + 2 * PROBE_TIMEOUT_MS + RECENT_MARGIN_MS;
    const { metrics } = options;
    this.reads = metrics.counter({
      name: 'partner_tags_db_reads_total',
      help: 'Replica-eligible reads (event list, export, statistics) by route and the database that answered',
      labelNames: ['route', 'target'] as const,
    });
    this.fallbacks = metrics.counter({
      name: 'partner_tags_db_replica_fallbacks_total',
      help: 'Reads sent to the primary although a replica is configured, by route and reason: down, lagging, behind (a read that must see the latest commits, not replayed in time), error (failed on the replica), confirm (a refusal checked on the primary)',
      labelNames: ['route', 'reason'] as const,
    });
    for (const route of ROUTES) {
      for (const target of ['replica', 'primary']) this.reads.inc({ route, target }, 0);
      for (const reason of REASONS) this.fallbacks.inc({ route, reason }, 0);
    }
  }

  /** The replica's gauges: lag in seconds and bytes (NaN while unmeasured or down) and up (1/0). */
  registerMetrics(metrics: Metrics): void {
    metrics.gaugeOf(
      'partner_tags_db_replica_lag_seconds',
      'How far the read replica is behind the primary, in seconds (at most; NaN while down or unmeasured)',
      () => this.lag.seconds,
    );
    metrics.gaugeOf(
      'partner_tags_db_replica_lag_bytes',
      "WAL bytes the read replica has not replayed yet (the primary's position minus the replica's)",
      () => this.lag.bytes,
    );
    metrics.gaugeOf(
      'partner_tags_db_replica_up',
      '1 while the read replica answers as a standby and its lag is measured, else 0',
      () => (this.state === 'up' || this.state === 'lagging' ? 1 : 0),
    );
  }

  /** Measures once (a replica down does not fail the start), then every `checkIntervalMs`. */
  async start(): Promise<void> {
    await this.check();
    const loop = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.checking = this.check().finally(loop);
      }, this.options.checkIntervalMs);
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.checking;
  }

  /** The replica when it is healthy, else why not. */
  private choose(): 'replica' | FallbackReason {
    const fresh = Date.now() - this.checkedAt <= 3 * this.options.checkIntervalMs + 2 * PROBE_TIMEOUT_MS;
    if (this.state === 'up' && fresh) return 'replica';
    return this.state === 'lagging' && fresh ? 'lagging' : 'down';
  }

  async run<T>(route: ReadRoute, read: (db: Database) => Promise<T>, options: ReadOptions = {}): Promise<T> {
    const chosen = this.choose();
    if (chosen !== 'replica') return this.onPrimary(route, read, chosen);
    // Before the replica's read, and outside its try: a refusal there is the answer, a failure the primary's.
    const recent = options.primaryCheck ? await options.primaryCheck(this.primary, this.recentMs) : false;
    // The primary's position after the check: every commit the check saw is at or before it.
    const target = options.caughtUp || recent ? await this.primaryLsn() : null;
    try {
      if (target !== null && !(await this.replayed(target))) return this.onPrimary(route, read, 'behind');
      const result = await read(this.replica);
      this.reads.inc({ route, target: 'replica' });
      return result;
    } catch (error) {
      if (error instanceof AppError) return this.onPrimary(route, read, 'confirm');
      if (!replicaFailed(error)) throw error;
      if (isConnectionError(error)) this.setState('down', error);
      this.options.logger.warn({ err: error, route }, 'read replica failed a read: the primary answers it');
      return this.onPrimary(route, read, 'error');
    }
  }

  private async onPrimary<T>(route: ReadRoute, read: (db: Database) => Promise<T>, reason: FallbackReason) {
    this.fallbacks.inc({ route, reason });
    const result = await read(this.primary);
    this.reads.inc({ route, target: 'primary' });
    return result;
  }

  private async primaryLsn(db = this.primary): Promise<string> {
    const [rows = []] = await readRows(db, [sql`select pg_current_wal_lsn()::text as lsn`]);
    return String(rows[0]?.lsn);
  }

  /** True once the replica replayed up to `lsn`, polled for at most CATCH_UP_WAIT_MS. */
  private async replayed(lsn: string): Promise<boolean> {
    const deadline = Date.now() + CATCH_UP_WAIT_MS;
    for (;;) {
      const [rows = []] = await readRows(this.replica, [
        sql`select coalesce(pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn, false) as ok`,
      ]);
      if (rows[0]?.ok === true) return true;
      if (Date.now() >= deadline) return false;
      await sleep(CATCH_UP_POLL_MS);
    }
  }

  /** One lag measurement: the primary's WAL position, then the replica's replay position. */
  async check(): Promise<void> {
    const at = Date.now();
    const probes = this.options.probes ?? { primary: this.primary, replica: this.replica };
    try {
      const lsn = lsnBytes(
        await withTimeout(this.primaryLsn(probes.primary), PROBE_TIMEOUT_MS, 'primary WAL position'),
      );
      const [rows = []] = await withTimeout(
        readRows(probes.replica, [
          sql`select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replay,
            extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as age`,
        ]),
        PROBE_TIMEOUT_MS,
        'replica replay position',
      );
      const row = rows[0];
      if (row?.standby !== true || typeof row.replay !== 'string') {
        this.setState('down', new Error('DATABASE_READ_URL is not a standby (pg_is_in_recovery() is false)'));
        return;
      }
      this.samples.push({ at, lsn });
      if (this.samples.length > SAMPLES) this.samples.shift();
      const replay = lsnBytes(row.replay);
      const age = typeof row.age === 'number' ? row.age : null;
      this.lag = {
        seconds: lagSeconds(Date.now(), this.samples, replay, age),
        bytes: Number(lsn > replay ? lsn - replay : 0n),
      };
      this.checkedAt = Date.now();
      this.setState(this.lag.seconds * 1000 > this.options.maxLagMs ? 'lagging' : 'up');
    } catch (error) {
      this.setState('down', error);
    }
  }

  /** Logs each change of state once (requests are counted, not logged). */
  private setState(next: State, error?: unknown): void {
    if (next === 'down') this.lag = { seconds: Number.NaN, bytes: Number.NaN };
    if (next === this.state) return;
    const { logger, maxLagMs } = this.options;
    const lagSeconds = this.lag.seconds;
    if (next === 'up') logger.info({ lagSeconds }, 'read replica in use');
    if (next === 'lagging')
      logger.warn({ lagSeconds, maxLagMs }, 'read replica too far behind: reads go to the primary');
    if (next === 'down') logger.warn({ err: error }, 'read replica unavailable: reads go to the primary');
    this.state = next;
  }
}
