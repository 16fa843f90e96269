import { bucketOf, dimensionsOf, revenueOf } from './event-facts.js';
import { addRegister, encodeSparseHex, registerOf, type SparseEntries } from './sketch.js';

/** What one event adds to the aggregates: indexes into the batch's groups. */
export interface RowAggregates {
  /** Its bucket group (merchant, bucket, event name). */
  g: number;
  /** Its dimension groups, a comma list (page views only). */
  d: string | null;
  /** Its revenue group (purchases with a currency only). */
  r: number | null;
  /** The purchase's value as decimal text. */
  a: string | null;
}

interface SketchGroup {
  i: number;
  merchant_id: string;
  bucket: string;
  entries: SparseEntries;
}

/**
 * The aggregate groups of one batch, made in JS so the statement upserts each aggregate table once:
 * a group per (merchant, 15-minute bucket, event name), per (merchant, dimension, bucket, value) and
 * per (merchant, bucket, currency). Counts and sums are taken in SQL over the rows really inserted
 * (a retried id adds nothing); the sketches take every row, as adding a muid twice changes nothing.
 */
export class BatchAggregates {
  private readonly buckets = new Map<string, SketchGroup & { event_name: string }>();
  private readonly dimensions = new Map<string, SketchGroup & { dimension: string; value: string }>();
  private readonly revenue = new Map<string, { i: number; merchant_id: string; bucket: string; currency: string }>();

  add(merchantId: string, eventName: string, eventTime: string, muid: string, rawData: string): RowAggregates {
    const ms = bucketOf(eventTime);
    const register = registerOf(muid);
    const key = `${merchantId}\u0000${ms}\u0000${eventName}`;
    let group = this.buckets.get(key);
    if (!group) {
      const bucket = new Date(ms).toISOString();
      group = { i: this.buckets.size, merchant_id: merchantId, bucket, event_name: eventName, entries: new Map() };
      this.buckets.set(key, group);
    }
    addRegister(group.entries, register);
    const { bucket } = group;
    const out: RowAggregates = { g: group.i, d: null, r: null, a: null };
    if (eventName !== 'PageView' && eventName !== 'Purchase') return out;
    let data: unknown;
    try {
      data = JSON.parse(rawData);
    } catch {
      return out;
    }
    if (eventName === 'Purchase') {
      const revenue = revenueOf(data);
      if (revenue) {
        const revenueKey = `${merchantId}\u0000${ms}\u0000${revenue.currency}`;
        let revenueGroup = this.revenue.get(revenueKey);
        if (!revenueGroup) {
          revenueGroup = { i: this.revenue.size, merchant_id: merchantId, bucket, currency: revenue.currency };
          this.revenue.set(revenueKey, revenueGroup);
        }
        out.r = revenueGroup.i;
        out.a = revenue.amount;
      }
      return out;
    }
    const values = dimensionsOf(data);
    if (!values) return out;
    const indexes: number[] = [];
    for (const [dimension, value] of values) {
      const dimensionKey = `${merchantId}\u0000${ms}\u0000${dimension}\u0000${value}`;
      let dimensionGroup = this.dimensions.get(dimensionKey);
      if (!dimensionGroup) {
        dimensionGroup = {
          i: this.dimensions.size,
          merchant_id: merchantId,
          bucket,
          dimension,
          value,
          entries: new Map(),
        };
        this.dimensions.set(dimensionKey, dimensionGroup);
      }
      addRegister(dimensionGroup.entries, register);
      indexes.push(dimensionGroup.i);
    }
    out.d = indexes.join(',');
    return out;
  }

  /**
   * The groups as the statement's JSON parameters. Their order does not matter for locks: a
   * statement takes its merchants' `event_seqs` rows before any aggregate row, and aggregate rows
   * belong to one merchant.
   */
  payloads(): { buckets: string; dimensions: string; revenue: string } {
    const buckets = [...this.buckets.values()].map((g) => ({
      i: g.i,
      merchant_id: g.merchant_id,
      bucket: g.bucket,
      event_name: g.event_name,
      v: encodeSparseHex(g.entries),
    }));
    const dimensions = [...this.dimensions.values()].map((g) => ({
      i: g.i,
      merchant_id: g.merchant_id,
      dimension: g.dimension,
      bucket: g.bucket,
      value: g.value,
      v: encodeSparseHex(g.entries),
    }));
    return {
      buckets: JSON.stringify(buckets),
      dimensions: JSON.stringify(dimensions),
      revenue: JSON.stringify([...this.revenue.values()]),
    };
  }
}
