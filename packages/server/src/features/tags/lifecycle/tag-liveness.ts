import { eq, inArray } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { type TagRow, tags } from '../../../db/schema/index.js';
import { AppError } from '../../../kernel/errors.js';
import { TtlCache } from '../../../kernel/ttl-cache.js';
import { TagActivity, type TagEventOutbox } from './tag-activity.js';

/** How long a live tag is trusted without reading it again. Tags that are not live are never cached. */
const LIVE_TAG_TTL_MS = 5_000;
/** How long a tag seen live stays "known live" for `knownWhenUnreachable`. */
const KNOWN_LIVE_TTL_MS = 24 * 3600 * 1000;

export type LiveTag = Pick<TagRow, 'id' | 'merchantId' | 'status'>;

/** A tag takes events once it is live: preverified at once, custom after a successful verification. */
function isLive(tag: Pick<TagRow, 'status'>): boolean {
  return tag.status === 'active' || tag.status === 'waiting_for_events';
}

/** Which tags take events, and the tag lifecycle once they stored some. */
export class TagLiveness {
  /** Live tags by id. */
  private readonly live = new TtlCache<string, LiveTag>(50_000);
  /** Live tags this process has seen, kept past the cache's TTL. */
  private readonly knownLive = new TtlCache<string, LiveTag>(200_000);
  /** Background re-reads of known tags under way. */
  private readonly refreshing = new Set<string>();
  /** The tag lifecycle's writes, at most once per tag per LAST_EVENT_RESOLUTION_MS. */
  private readonly activity: TagActivity;

  constructor(
    private readonly db: Database,
    /** Where a tag's first event writes `tag.activated` (the webhook outbox). */
    outbox: TagEventOutbox,
  ) {
    this.activity = new TagActivity(db, outbox);
  }

  /** The tag by id when it is live; cached briefly (only live tags: a verify takes effect at once). */
  async liveTag(tagId: string, options: { knownWhenUnreachable?: boolean } = {}): Promise<LiveTag> {
    const cached = this.live.get(tagId);
    if (cached) return cached;
    if (options.knownWhenUnreachable) {
      // Log mode: a tag known live is answered at once and re-read in the background, so the
      // collector never waits for the database (down, or silent until its deadline).
      const known = this.knownLive.get(tagId);
      if (known) {
        if (!this.refreshing.has(tagId)) {
          this.refreshing.add(tagId);
          void this.read(tagId)
            .catch(() => {})
            .finally(() => this.refreshing.delete(tagId));
        }
        return known;
      }
    }
    return this.read(tagId);
  }

  /** Reads the tag; caches it when live, forgets it otherwise. */
  private async read(tagId: string): Promise<LiveTag> {
    const [tag] = await this.db
      .select({ id: tags.id, merchantId: tags.merchantId, status: tags.status })
      .from(tags)
      .where(eq(tags.id, tagId))
      .limit(1);
    if (!tag || !isLive(tag)) {
      this.knownLive.delete(tagId);
      this.live.delete(tagId);
    }
    if (!tag) throw new AppError('TAG_NOT_FOUND', `No tag ${tagId}`);
    if (!isLive(tag)) {
      throw new AppError(
        'TAG_NOT_LIVE',
        `Tag ${tag.id} is not live yet: a custom-domain tag takes events after a successful DNS verification`,
      );
    }
    this.live.set(tagId, tag, LIVE_TAG_TTL_MS);
    this.knownLive.set(tagId, tag, KNOWN_LIVE_TTL_MS);
    return tag;
  }

  /** Deleted tags are forgotten at once, so they stop taking events now rather than when the cache's entry runs out. */
  forget(tagIds: readonly string[] | null): void {
    if (tagIds === null) {
      this.live.clear();
      this.knownLive.clear();
      return;
    }
    for (const id of tagIds) {
      this.live.delete(id);
      this.knownLive.delete(id);
    }
  }

  /** Which of these tags still exist (live or not): a tag cached live does, the others are read in one query. */
  async existing(tagIds: readonly string[]): Promise<Set<string>> {
    const found = new Set(tagIds.filter((id) => this.live.get(id) !== undefined));
    const unknown = tagIds.filter((id) => !found.has(id));
    if (unknown.length === 0) return found;
    const rows = await this.db.select({ id: tags.id }).from(tags).where(inArray(tags.id, unknown));
    for (const row of rows) found.add(row.id);
    return found;
  }

  /** The tag lifecycle after events were stored: the tags move to `active`, and the live tags cached here learn it. */
  async eventsStored(tagIds: string[]): Promise<void> {
    for (const id of await this.activity.record(tagIds)) {
      const live = this.live.get(id);
      if (live && live.status !== 'active') this.live.set(id, { ...live, status: 'active' }, LIVE_TAG_TTL_MS);
    }
  }
}
