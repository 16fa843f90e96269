import type { Clickhouse } from '../../db/clickhouse/client.js';
import type { Logger } from '../../kernel/logger.js';

const BUCKET_MS = 15 * 60_000;
const FLUSH_MS = 5_000;
/** Keys (merchant and quarter hour) held at most between flushes: a flood of merchants cannot grow it. */
const MAX_KEYS = 50_000;

/**
 * The events the collectors refused as bots, counted per merchant and quarter hour in memory and
 * added to `bot_events` every 5 s (a SummingMergeTree: each flush adds rows, merges sum them).
 * Counts of a process that dies before its flush are lost: they are a figure shown, not events.
 */
export class BotCounts {
  private counts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly clickhouse: Clickhouse,
    private readonly logger: Logger,
  ) {}

  /** Counts one refused event of `merchantId` dated `at` (ms). */
  add(merchantId: string, at: number): void {
    if (!Number.isFinite(at)) return;
    const key = `${merchantId} ${Math.floor(at / BUCKET_MS) * (BUCKET_MS / 1000)}`;
    if (!this.counts.has(key) && this.counts.size >= MAX_KEYS) return;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const counts = this.counts;
    this.counts = new Map();
    if (counts.size === 0) return this.flushing;
    const rows = [...counts].map(([key, events]) => {
      const [merchant_id, bucket] = key.split(' ');
      return { merchant_id, bucket: Number(bucket), events };
    });
    this.flushing = this.flushing
      .then(() => this.clickhouse.insert('bot_events', rows))
      .catch((error) => this.logger.warn({ err: error, rows: rows.length }, 'statistics: bot counts not written'));
    return this.flushing;
  }
}
