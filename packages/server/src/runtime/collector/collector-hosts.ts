import { eq, sql } from 'drizzle-orm';
import type { Database, DatabaseHandle } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { partners, tags } from '../../db/schema/index.js';
import type { Logger } from '../../kernel/logger.js';

/** The channel migration 0012's triggers notify on: a new host, or `*` (reload everything). */
const COLLECTOR_HOSTS_CHANNEL = 'partner_collector_hosts';
/** Past it the set is dropped and hosts are looked up per request again. */
const MAX_COLLECTOR_HOSTS = 200_000;

/** Every collector host in memory, per database. */
export class CollectorHostSet {
  private hosts: Set<string> | null = null;
  /** Hosts notified while a reload is reading (added to the reloaded set). */
  private arrived: Set<string> | null = null;
  private loading: Promise<void> | null = null;
  private reloadAgain = false;
  private watchers = 0;

  /** True while the set is complete and watched: a host outside it is no collector host. */
  get ready(): boolean {
    return this.hosts !== null && this.watchers > 0;
  }

  /** Whether `host` is a collector host; undefined when the set cannot tell (not ready). */
  has(host: string): boolean | undefined {
    if (!this.ready) return undefined;
    return (this.hosts as Set<string>).has(host);
  }

  get size(): number {
    return this.hosts?.size ?? 0;
  }

  /** @internal A notification's payload. */
  onPayload(payload: string, reload: () => void): void {
    if (payload === '*' || payload === '') {
      reload();
      return;
    }
    this.arrived?.add(payload);
    if (this.hosts) {
      if (this.hosts.size >= MAX_COLLECTOR_HOSTS) this.hosts = null;
      else this.hosts.add(payload);
    }
  }

  /** @internal Reads every host (coalesced: one read at a time, one more queued). */
  reload(db: Database, logger?: Logger): Promise<void> {
    if (this.loading) {
      this.reloadAgain = true;
      return this.loading;
    }
    this.arrived = new Set();
    this.loading = (async () => {
      try {
        const rows = rowsOf<{ host: string }>(
          await db.execute(sql`
          (select ${tags.recordName} || '.' || ${tags.domain} as host from ${tags} where ${eq(tags.domainType, 'custom')})
          union all
          (select ${partners.recordName} || '.' || ${partners.domain} from ${partners})
          limit ${MAX_COLLECTOR_HOSTS + 1}`),
        );
        if (rows.length > MAX_COLLECTOR_HOSTS) {
          this.hosts = null;
          logger?.warn(
            { max: MAX_COLLECTOR_HOSTS },
            'collector hosts: more than the in-memory bound; looked up per request',
          );
          return;
        }
        const next = new Set(rows.map((row) => row.host));
        for (const host of this.arrived ?? []) next.add(host);
        this.hosts = next;
      } catch (error) {
        // Not ready: hosts are looked up per request until a reload succeeds.
        this.hosts = null;
        logger?.warn({ err: error }, 'collector hosts: reload failed');
      } finally {
        this.arrived = null;
        this.loading = null;
        if (this.reloadAgain) {
          this.reloadAgain = false;
          void this.reload(db, logger);
        }
      }
    })();
    return this.loading;
  }

  /** @internal Counts a watcher in (on) or out; the set is dropped when nobody watches. */
  watch(delta: 1 | -1): void {
    this.watchers = Math.max(0, this.watchers + delta);
    if (this.watchers === 0) this.hosts = null;
  }
}

/** LISTENs on `partner_collector_hosts` and loads the set. */
export async function watchCollectorHosts(
  database: DatabaseHandle,
  set: CollectorHostSet,
  logger?: Logger,
): Promise<() => Promise<void>> {
  const reload = () => void set.reload(database.db, logger);
  try {
    const unlisten = await database.listen(
      COLLECTOR_HOSTS_CHANNEL,
      (payload) => set.onPayload(payload, reload),
      reload,
    );
    set.watch(1);
    await set.reload(database.db, logger);
    let stopped = false;
    return async () => {
      if (stopped) return;
      stopped = true;
      set.watch(-1);
      await unlisten();
    };
  } catch (error) {
    logger?.warn({ err: error }, 'collector hosts: LISTEN failed; looked up per request');
    return async () => {};
  }
}
