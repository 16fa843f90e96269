import { bucketOf, dimensionsOf, revenueOf } from './event-facts.js';
import { addMuid, encodeSparse, type SparseEntries } from './sketch.js';

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
    const bucket = new Date(ms).toISOString();
    const key = `${merchantId}\u0000${ms}\u0000${eventName}`;
    let group = this.buckets.get(key);
    if (!group) {
      group = { i: this.buckets.size, merchant_id: merchantId, bucket, event_name: eventName, entries: new Map() };
      this.buckets.set(key, group);
    }
    addMuid(group.entries, muid);
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
      addMuid(dimensionGroup.entries, muid);
      indexes.push(dimensionGroup.i);
    }
    out.d = indexes.join(',');
    return out;
  }

  /** The groups as the statement's JSON parameters, in key order (rows lock in one order). */
  payloads(): { buckets: string; dimensions: string; revenue: string } {
    const byKey = <T extends { merchant_id: string; bucket: string }>(rows: T[], rest: (row: T) => string) =>
      rows.sort((a, b) =>
        a.merchant_id < b.merchant_id
          ? -1
          : a.merchant_id > b.merchant_id
            ? 1
            : cmp(a.bucket + rest(a), b.bucket + rest(b)),
      );
    const buckets = byKey([...this.buckets.values()], (g) => g.event_name).map((g) => ({
      i: g.i,
      merchant_id: g.merchant_id,
      bucket: g.bucket,
      event_name: g.event_name,
      v: encodeSparse(g.entries).toString('base64'),
    }));
    const dimensions = [...this.dimensions.values()]
      .sort((a, b) =>
        cmp(
          `${a.merchant_id}\u0000${a.dimension}\u0000${a.bucket}\u0000${a.value}`,
          `${b.merchant_id}\u0000${b.dimension}\u0000${b.bucket}\u0000${b.value}`,
        ),
      )
      .map((g) => ({
        i: g.i,
        merchant_id: g.merchant_id,
        dimension: g.dimension,
        bucket: g.bucket,
        value: g.value,
        v: encodeSparse(g.entries).toString('base64'),
      }));
    const revenue = byKey([...this.revenue.values()], (g) => g.currency);
    return {
      buckets: JSON.stringify(buckets),
      dimensions: JSON.stringify(dimensions),
      revenue: JSON.stringify(revenue),
    };
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
