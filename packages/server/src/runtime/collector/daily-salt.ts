import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';

const PREFIX = 'visitor-salt:';

/**
 * The salt of cookieless visitor hashes (docs/decisions/consent.md): one random secret per UTC day,
 * shared by every process through `server_secrets` (so one visitor hashes the same on any of them),
 * never exposed, and deleted once its day is over; this process keeps only today's in memory. With
 * yesterday's salt gone, nobody (us included) can link a visitor's hashes across days or recompute
 * one from an IP address and user agent.
 */
export class DailySalt {
  private current: { day: string; salt: Buffer } | undefined;
  private pending: Promise<Buffer> | undefined;

  constructor(private readonly db: Database) {}

  /** Today's salt (UTC), made by the first process that asks for it. */
  async today(now = new Date()): Promise<Buffer> {
    const day = now.toISOString().slice(0, 10);
    if (this.current?.day === day) return this.current.salt;
    this.pending ??= this.load(day).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
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
