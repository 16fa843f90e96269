import type { StatsFilter } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import { type Clickhouse, openClickhouse } from '../../db/clickhouse/client.js';
import { migrateClickhouse } from '../../db/clickhouse/migrate.js';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { AppError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import { BotCounts } from './bots.js';
import { readFunnelSteps } from './funnel-steps.js';
import { ReadGate } from './gate.js';
import { readGoalRows } from './goal-rows.js';
import type { GoalDefinition } from './goal-sql.js';
import { readGoalTotals } from './goal-totals.js';
import { readHourVisitors } from './hour-visitors.js';
import { type LoadProgress, loadStoredEvents } from './load.js';
import { type PointsQuery, type PointTotals, readPoints } from './points.js';
import type { EventClient, StoredEvent } from './stored-event.js';
import { readTopValues, type TopValuesQuery } from './top-values.js';
import { readTouches, type TouchesQuery } from './touches.js';
import { type OutboxRange, StatsTransfer, type TransferOptions } from './transfer.js';
import { readVisitorsNow } from './visitors-now.js';
import type { Scope } from './where.js';

export { clientText } from './stored-event.js';
export type { EventClient, LoadProgress, OutboxRange, StoredEvent };

export type StatsEngine = { kind: 'chdb'; path: string; database: string } | { kind: 'server'; url: string };

/** How long a delete waits for the events stored before it to reach ClickHouse. */
const SETTLE_MS = 30_000;

/**
 * The statistics' one port: ingestion hands it the events it stored, the stats reads ask it their
 * questions, and erasure, retention and the merchant purge delete through it. Behind it, ClickHouse
 * (db/clickhouse/): chDB in this process or a server by URL, the same statements either way.
 */
export class StatsStore {
  private readonly gate = new ReadGate();
  private readonly bots: BotCounts;

  private constructor(
    private readonly clickhouse: Clickhouse,
    private readonly transfer: StatsTransfer,
    private readonly db: Database,
    logger: Logger,
  ) {
    this.bots = new BotCounts(clickhouse, logger);
  }

  static async open(
    engine: StatsEngine,
    db: Database,
    logger: Logger,
    options: TransferOptions = {},
  ): Promise<StatsStore> {
    const clickhouse = await openClickhouse(engine);
    try {
      await migrateClickhouse(clickhouse);
      return new StatsStore(clickhouse, new StatsTransfer(db, clickhouse, logger, options), db, logger);
    } catch (error) {
      await clickhouse.close();
      throw error;
    }
  }

  get kind(): Clickhouse['kind'] {
    return this.clickhouse.kind;
  }

  /** Events just stored by this process, and their outbox ranges (claimed by it). */
  record(events: StoredEvent[], ranges: OutboxRange[]): void {
    this.transfer.record(events, ranges);
  }

  points(principal: string, query: PointsQuery, edges?: readonly number[]): Promise<PointTotals> {
    return this.read(principal, query.merchantId, () => readPoints(this.clickhouse, query, edges));
  }

  /** Events a collector refused as a bot's, by their dates (ms): counted, never stored. */
  countBots(merchantId: string, dates: readonly number[]): void {
    for (const at of dates) this.bots.add(merchantId, at);
  }

  /** Events the collectors refused as bots, before `split` and from it, of `[start, end)`. */
  async botEvents(
    merchantId: string,
    start: number,
    split: number,
    end: number,
  ): Promise<{ before: number; current: number }> {
    await this.bots.flush();
    const [row] = await this.clickhouse.query<{ before: string; current: string }>(
      `SELECT sumIf(events, bucket < toDateTime({split:Int64})) AS before, sumIf(events, bucket >= toDateTime({split:Int64})) AS current
       FROM bot_events WHERE merchant_id = {merchant:UUID} AND bucket >= toDateTime({start:Int64}) AND bucket < toDateTime({end:Int64})`,
      {
        merchant: merchantId,
        start: Math.floor(start / 1000),
        split: Math.floor(split / 1000),
        end: Math.floor(end / 1000),
      },
    );
    return { before: Number(row?.before ?? 0), current: Number(row?.current ?? 0) };
  }

  topValues(principal: string, query: TopValuesQuery) {
    return this.read(principal, query.merchantId, () => readTopValues(this.clickhouse, query));
  }

  goalTotals(principal: string, scope: Scope, splitAt: number, goals: readonly GoalDefinition[]) {
    return this.read(principal, scope.merchantId, () => readGoalTotals(this.clickhouse, scope, splitAt, goals));
  }

  goalRows(principal: string, query: TopValuesQuery, goal: GoalDefinition, values: readonly string[]) {
    return this.read(principal, query.merchantId, () => readGoalRows(this.clickhouse, query, goal, values));
  }

  funnel(principal: string, scope: Scope, steps: readonly GoalDefinition[], windowMs: number) {
    return this.read(principal, scope.merchantId, () => readFunnelSteps(this.clickhouse, scope, steps, windowMs));
  }

  touches(principal: string, query: TouchesQuery) {
    return this.read(principal, query.merchantId, () => readTouches(this.clickhouse, query));
  }

  /** Visitors of whole UTC hours (their starts, ms): the spike check's counts. */
  hourVisitors(principal: string, merchantId: string, hours: readonly number[]) {
    return this.read(principal, merchantId, () => readHourVisitors(this.clickhouse, merchantId, hours));
  }

  visitorsNow(principal: string, merchantId: string, now: number, filters: readonly StatsFilter[] = []) {
    return this.read(principal, merchantId, () => readVisitorsNow(this.clickhouse, merchantId, now, filters));
  }

  /**
   * A read through the gate (per key or session, and per process), after this process's own
   * writes of the merchant (only its own: another merchant's insert never holds it up).
   */
  private async read<T>(principal: string, merchantId: string, run: () => Promise<T>): Promise<T> {
    try {
      return await this.gate.run(principal, async () => {
        await this.transfer.flushed(merchantId);
        return run();
      });
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError('STATS_UNAVAILABLE', 'The statistics did not answer in time; retry shortly.', {
        cause: error,
        headers: { 'retry-after': '2' },
      });
    }
  }

  /** Sends outbox ranges whose claim ran out (another process's crash, an outage). */
  recover(limit?: number, signal?: AbortSignal): Promise<number> {
    return this.transfer.recover(limit, signal);
  }

  /**
   * Waits until the events of `merchantIds` stored before now are in ClickHouse; false past the
   * deadline (the caller tries again later).
   */
  private async settled(merchantIds: readonly string[]): Promise<boolean> {
    const [row] = rowsOf<{ horizon: string }>(await this.db.execute(sql`select events_horizon_seq()::text as horizon`));
    const horizon = Number(row?.horizon);
    for (const merchantId of merchantIds) {
      if (!(await this.transfer.settled(merchantId, horizon, SETTLE_MS))) return false;
    }
    return true;
  }

  /**
   * Deletes a visitor's events from the statistics of `merchantIds` (their events already gone from
   * PostgreSQL); the projections are rebuilt with the rows. False: not yet (try again).
   */
  async forgetVisitor(merchantIds: readonly string[], muid: string): Promise<boolean> {
    if (merchantIds.length === 0) return true;
    if (!(await this.settled(merchantIds))) return false;
    await this.clickhouse.command(
      'DELETE FROM events WHERE merchant_id IN {merchants:Array(UUID)} AND visitor = sipHash64({muid:String})',
      { merchants: merchantIds, muid },
      { timeoutMs: 120_000 },
    );
    return true;
  }

  /** Deletes a deleted merchant's statistics (its events already gone from PostgreSQL). False: not yet. */
  async purgeMerchant(merchantId: string): Promise<boolean> {
    if (!(await this.settled([merchantId]))) return false;
    await this.clickhouse.command(
      'DELETE FROM events WHERE merchant_id = {merchant:UUID}',
      { merchant: merchantId },
      {
        timeoutMs: 120_000,
      },
    );
    return true;
  }

  /** Deletes a merchant's statistics of events dated before `cutoff` (retention). */
  async expireBefore(merchantId: string, cutoff: Date): Promise<void> {
    const params = { merchant: merchantId, cutoff: cutoff.getTime() };
    const where = 'merchant_id = {merchant:UUID} AND event_time < toDateTime64({cutoff:Int64} / 1000, 3)';
    const [any] = await this.clickhouse.query(`SELECT 1 FROM events WHERE ${where} LIMIT 1`, params);
    if (any) await this.clickhouse.command(`DELETE FROM events WHERE ${where}`, params, { timeoutMs: 120_000 });
  }

  /**
   * Makes the statistics hold exactly PostgreSQL's events of one merchant's seq range (the load of
   * events stored before the statistics were, load.ts), once the outbox holds none of it.
   */
  async loadRange(range: OutboxRange): Promise<void> {
    if (!(await this.transfer.settled(range.merchantId, range.lastSeq + 1, SETTLE_MS))) {
      throw new Error(`events of merchant ${range.merchantId} are still on their way to the statistics`);
    }
    await this.transfer.resend(range);
  }

  /**
   * Loads the events stored in PostgreSQL before this store existed (load.ts), once: a load cut
   * short is resumed by the next call. Null when done before.
   */
  async loadStored(signal?: AbortSignal): Promise<LoadProgress | null> {
    const done = await this.clickhouse.query("SELECT 1 FROM schema_migrations WHERE name = 'load:complete'");
    if (done.length > 0) return null;
    return this.load(undefined, signal);
  }

  /** Loads every stored event now (what is already here is counted, not sent again). */
  async load(onProgress?: (progress: LoadProgress) => void, signal?: AbortSignal): Promise<LoadProgress> {
    const progress = await loadStoredEvents(this.db, this, { signal, onProgress });
    if (!signal?.aborted) await this.clickhouse.insert('schema_migrations', [{ name: 'load:complete' }]);
    return progress;
  }

  /** Deletes events of a merchant by seq (retention's future-dated events, received before its cutoff). */
  async forgetSeqs(merchantId: string, seqs: readonly number[]): Promise<void> {
    await this.clickhouse.command(
      'DELETE FROM events WHERE merchant_id = {merchant:UUID} AND seq IN {seqs:Array(UInt64)}',
      { merchant: merchantId, seqs },
      { timeoutMs: 120_000 },
    );
  }

  /** Sends what is queued, then closes ClickHouse. */
  async close(): Promise<void> {
    await this.bots.flush();
    await this.transfer.close();
    await this.clickhouse.close();
  }
}
