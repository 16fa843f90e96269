import { isIP } from 'node:net';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { merchants, partners, tags } from '../../db/schema/index.js';
import { TtlCache } from '../../kernel/ttl-cache.js';
import type { CollectorHostSet } from '../../runtime/collector/collector-hosts.js';
import type { DeletedTags } from '../../runtime/collector/deleted-tags.js';
import { collectorHostOf } from './collector-host.js';
import type { TagConsent } from './consent.js';
import { rootDomainOf } from './domains.js';

/** How long host and tag lookups are trusted (a tag's collector host never changes). */
const HOST_TTL_MS = 30_000;
const MISS_TTL_MS = 2_000;
/** Hosts and tags once found are served from memory this long while the database does not answer. */
const KNOWN_TTL_MS = 24 * 3600 * 1000;

export interface CollectorTag {
  tagId: string;
  collectorHost: string;
  /** The registrable root of the collector host: the muid cookie's Domain and the CORS boundary. */
  rootDomain: string;
  /** The merchant: part of a cookieless visitor's hash. */
  merchantId: string;
  /** The tag's consent settings (docs/decisions/consent.md): inlined in its script, enforced on `/e`. */
  consent: TagConsent;
}

/** The `Host` header without port or trailing dot, lower-cased; null for IP literals and bare names. */
export function hostOfHeader(header: string | undefined): string | null {
  if (!header) return null;
  // Every request asks, with a handful of distinct headers: remembered (bounded, any header is sent by clients).
  const known = hostsOfHeaders.get(header);
  if (known !== undefined) return known;
  const host = normalizedHost(header);
  if (hostsOfHeaders.size >= HOSTS_OF_HEADERS_MAX) hostsOfHeaders.clear();
  hostsOfHeaders.set(header, host);
  return host;
}

const HOSTS_OF_HEADERS_MAX = 1_000;
const hostsOfHeaders = new Map<string, string | null>();

function normalizedHost(header: string): string | null {
  if (header.startsWith('[')) return null;
  const host = header.replace(/:\d*$/, '').replace(/\.$/, '').toLowerCase();
  if (!host.includes('.') || isIP(host) !== 0) return null;
  return host;
}

/** Which hosts are collector hosts, and the collector of each tag, with a short in-memory cache. */
export class CollectorDirectory {
  private readonly hosts = new TtlCache<string, boolean>(20_000);
  private readonly tagCache = new TtlCache<string, CollectorTag | null>(50_000);
  /** Hosts and tags found before, kept a day: answered from here while the database does not answer. */
  private readonly knownHosts = new TtlCache<string, true>(100_000);
  private readonly knownTags = new TtlCache<string, CollectorTag>(200_000);
  /** Background re-reads under way (one per key). */
  private readonly refreshing = new Set<string>();

  constructor(
    private readonly db: Database,
    private readonly collectorHosts: CollectorHostSet,
    deletedTags?: DeletedTags,
  ) {
    // A deleted tag's script and `/e` answer 404 at once, not when its cached entry runs out; a tag
    // whose consent settings changed is read again (migration 0024 notifies the same channel).
    deletedTags?.subscribe((tagIds) => this.forget(tagIds));
  }

  /** Forgets deleted tags (null: every tag and host found by lookup). */
  private forget(tagIds: readonly string[] | null): void {
    if (tagIds === null) {
      this.tagCache.clear();
      this.knownTags.clear();
      this.hosts.clear();
      this.knownHosts.clear();
      return;
    }
    for (const id of tagIds) {
      this.tagCache.delete(id);
      this.knownTags.delete(id);
    }
    // Hosts found by lookup (only without the in-memory set): a custom tag's host goes with it.
    this.hosts.clear();
    this.knownHosts.clear();
  }

  /** True when `host` is `<record>.<domain>` of a custom tag or of a partner's onboarding record. */
  async isCollectorHost(host: string): Promise<boolean> {
    // The in-memory set of every host (collector-hosts.ts): no database query, whatever the Host.
    const inSet = this.collectorHosts.has(host);
    if (inSet !== undefined) return inSet;
    const cached = this.hosts.get(host);
    if (cached !== undefined) return cached;
    // Known: answered at once, re-read in the background (no database wait on the hot path).
    if (this.knownHosts.get(host)) {
      this.refresh(`h:${host}`, () => this.lookUpHost(host));
      return true;
    }
    try {
      return await this.lookUpHost(host);
    } catch (error) {
      if (this.knownHosts.get(host)) return true;
      throw error;
    }
  }

  private async lookUpHost(host: string): Promise<boolean> {
    const dot = host.indexOf('.');
    const label = host.slice(0, dot);
    const domain = host.slice(dot + 1);
    let found =
      (
        await this.db
          .select({ id: tags.id })
          .from(tags)
          .where(and(eq(tags.recordName, label), eq(tags.domain, domain), eq(tags.domainType, 'custom')))
          .limit(1)
      ).length > 0;
    if (!found) {
      found =
        (
          await this.db
            .select({ id: partners.id })
            .from(partners)
            .where(and(eq(partners.recordName, label), eq(partners.domain, domain)))
            .limit(1)
        ).length > 0;
    }
    this.hosts.set(host, found, found ? HOST_TTL_MS : MISS_TTL_MS);
    if (found) this.knownHosts.set(host, true, KNOWN_TTL_MS);
    else this.knownHosts.delete(host);
    return found;
  }

  /** The tag's collector, or null when there is no such tag. */
  async tag(tagId: string): Promise<CollectorTag | null> {
    const cached = this.tagCache.get(tagId);
    if (cached !== undefined) return cached;
    const stale = this.knownTags.get(tagId);
    if (stale) {
      this.refresh(`t:${tagId}`, () => this.lookUpTag(tagId));
      return stale;
    }
    try {
      return await this.lookUpTag(tagId);
    } catch (error) {
      const known = this.knownTags.get(tagId);
      if (known) return known;
      throw error;
    }
  }

  private async lookUpTag(tagId: string): Promise<CollectorTag | null> {
    const [row] = await this.db
      .select({
        domainType: tags.domainType,
        recordName: tags.recordName,
        domain: tags.domain,
        merchantId: tags.merchantId,
        mode: tags.consentMode,
        respectGpc: tags.respectGpc,
        cookieless: tags.cookieless,
        partnerRecordName: partners.recordName,
        partnerDomain: partners.domain,
      })
      .from(tags)
      .innerJoin(merchants, eq(merchants.id, tags.merchantId))
      .innerJoin(partners, eq(partners.id, merchants.partnerId))
      .where(eq(tags.id, tagId))
      .limit(1);
    let result: CollectorTag | null = null;
    if (row) {
      const collectorHost = collectorHostOf(row, { recordName: row.partnerRecordName, domain: row.partnerDomain });
      result = {
        tagId,
        collectorHost,
        rootDomain: rootDomainOf(collectorHost) ?? row.domain,
        merchantId: row.merchantId,
        consent: { mode: row.mode, respectGpc: row.respectGpc, cookieless: row.cookieless },
      };
    }
    this.tagCache.set(tagId, result, result ? HOST_TTL_MS : MISS_TTL_MS);
    if (result) this.knownTags.set(tagId, result, KNOWN_TTL_MS);
    else this.knownTags.delete(tagId);
    return result;
  }

  private refresh(key: string, read: () => Promise<unknown>): void {
    if (this.refreshing.has(key)) return;
    this.refreshing.add(key);
    // A failure keeps the known answer (the database may be away); the next miss tries again.
    void read()
      .catch(() => {})
      .finally(() => this.refreshing.delete(key));
  }
}
