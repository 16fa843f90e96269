import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import type { Logger } from '../../kernel/logger.js';

const PREFIX = 'visitor-salt:';
const DAY_MS = 86_400_000;
/** How long after a UTC midnight the ended day's salt is deleted (a timer may fire a little early). */
const AFTER_MIDNIGHT_MS = 1_000;
/** The longest wait between two looks at the clock: a wall clock that jumps is caught up within it. */
const MAX_WAIT_MS = 10 * 60_000;

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export interface DailySaltOptions {
  logger?: Logger;
  /** Epoch milliseconds now (tests move it; default `Date.now`). */
  clock?: () => number;
}

/** The salt of cookieless visitor hashes. */
export class DailySalt {
  private current: { day: string; salt: Buffer } | undefined;
  private pending: Promise<Buffer> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private expiring: Promise<void> | undefined;
  /** The day whose earlier salts were last deleted here. */
  private expiredBefore: string | undefined;
  private readonly clock: () => number;

  constructor(
    private readonly db: Database,
    private readonly options: DailySaltOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
  }

  /** Today's salt (UTC), made by the first process that asks for it. */
  async today(now = new Date(this.clock())): Promise<Buffer> {
    const day = now.toISOString().slice(0, 10);
    if (this.current?.day === day) return this.current.salt;
    this.pending ??= this.load(day).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Deletes the salts of ended days now, then after each UTC midnight. */
  start(): void {
    if (this.timer) return;
    this.tick();
  }

  /** Stops the timer; resolves once a deletion under way has ended. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.expiring;
  }

  private readonly tick = (): void => {
    const now = this.clock();
    const today = dayOf(now);
    if (this.expiredBefore !== today && !this.expiring) {
      this.expiring = this.expireBefore(today)
        .then(
          () => {
            this.expiredBefore = today;
          },
          (error: unknown) => this.options.logger?.warn({ err: error }, 'visitor salt: ended days not deleted'),
        )
        .finally(() => {
          this.expiring = undefined;
        });
    }
    const untilMidnight = DAY_MS - (now % DAY_MS) + AFTER_MIDNIGHT_MS;
    // A failed deletion is tried again at the next look (within MAX_WAIT_MS).
    this.timer = setTimeout(this.tick, Math.min(untilMidnight, MAX_WAIT_MS));
    this.timer.unref();
  };

  private async expireBefore(today: string): Promise<void> {
    if (this.current && this.current.day < today) this.current = undefined;
    await this.db.execute(sql`delete from server_secrets where name like ${`${PREFIX}%`} and name < ${PREFIX + today}`);
  }

  private async load(day: string): Promise<Buffer> {
    const name = `${PREFIX}${day}`;
    const made = randomBytes(32).toString('base64url');
    // One statement returning the salt whoever made it (as the cursor key: features/events/read/cursor.ts).
    const result = await this.db.execute(sql`insert into server_secrets (name, value) values (${name}, ${made})
        on conflict (name) do update set name = excluded.name returning value`);
    const value = rowsOf<{ value?: unknown }>(result)[0]?.value;
    if (typeof value !== 'string') throw new Error('server_secrets: the visitor salt could not be read');
    // Earlier days' salts go (names sort by day); a process still on yesterday makes nothing new.
    await this.db.execute(sql`delete from server_secrets where name like ${`${PREFIX}%`} and name < ${name}`);
    const salt = Buffer.from(value, 'base64url');
    this.current = { day, salt };
    return salt;
  }
}
