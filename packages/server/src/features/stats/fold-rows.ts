import { encodeSparse, entryOf, type SparseEntries } from './sketch.js';

/** An event as the fold reads it (fold.ts): merchant, 15-minute bucket (epoch ms), name, muid, PageView data. */
export interface FoldEvent {
  merchantId: string;
  quarter: number;
  eventName: string;
  muid: string;
  /** A PageView's data as stored (JSON text); null for any other event. */
  page: string | null;
}

/** A `stat_buckets` delta: merchant (1-based index), grain, bucket (ISO), name, events, sparse sketch (hex). */
interface BucketDelta {
  m: number;
  g: number;
  b: string;
  n: string;
  e: number;
  v: string;
}

/** A `stat_dimensions` delta: as BucketDelta, with the dimension `d` and its value `x`. */
interface DimensionDelta {
  m: number;
  d: string;
  g: number;
  b: string;
  x: string;
  e: number;
  v: string;
}

const REFERRER_HOST = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*)/;
const UTM = ['utm_source', 'utm_medium', 'utm_campaign'].map(
  (name) => [name, new RegExp(`[?&]${name}=([^&#]*)`)] as const,
);

const text = (value: unknown) => (typeof value === 'string' ? value : null);

/** `coalesce(nullif(left(v, 200), ''), '(none)')`: 200 characters (code points, as PostgreSQL counts). */
function dimensionValue(value: string | null): string {
  if (value === null || value === '') return '(none)';
  if (value.length <= 200) return value;
  let cut = '';
  let n = 0;
  for (const ch of value) {
    if (n++ === 200) break;
    cut += ch;
  }
  return cut;
}

/**
 * A PageView's dimension values, by the SQL rules of fold.ts (`dv`, the recount's and the
 * backfill's): `path`, the referrer's host (lower case) and the page URL's utm_* values (`+` read
 * as a space), `(none)` when absent. Data that is not a JSON object has none.
 */
function dimensionValuesOf(page: string): [string, string][] | null {
  let data: unknown;
  try {
    data = JSON.parse(page);
  } catch {
    return null;
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return null;
  const d = data as Record<string, unknown>;
  const url = text(d.url);
  const referrer = text(d.referrer);
  const host = referrer === null ? null : (REFERRER_HOST.exec(referrer)?.[1]?.toLowerCase() ?? null);
  return [
    ['path', dimensionValue(text(d.path))],
    ['referrer', dimensionValue(host)],
    ...UTM.map(([name, pattern]): [string, string] => [
      name,
      dimensionValue(url === null ? null : (pattern.exec(url)?.[1]?.replaceAll('+', ' ') ?? null)),
    ]),
  ];
}

interface Cell {
  m: number;
  g: number;
  b: number;
  dimension: string;
  key: string;
  e: number;
  entries: SparseEntries;
}

/** Ids for repeated strings: a cell's key is two small numbers, not a long string to hash. */
class Ids {
  private readonly ids = new Map<string, number>();

  keys(): string[] {
    return [...this.ids.keys()];
  }

  of(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(text, id);
    }
    return id;
  }
}

/** Slots (merchant, level, bucket) one FoldDeltas holds at most (a cell's id is key x SLOTS + slot). */
const SLOTS = 2 ** 21;

/** The cells of one table, by key id (a name, or a dimension and value) and slot. */
class Cells {
  readonly cells = new Map<number, Cell>();

  add(key: number, slot: number, slots: readonly Slot[], dimension: string, value: string, hash: number, rank: number) {
    const id = key * SLOTS + slot;
    let cell = this.cells.get(id);
    if (cell === undefined) {
      const { m, g, b } = slots[slot]!;
      cell = { m, g, b, dimension, key: value, e: 0, entries: new Map() };
      this.cells.set(id, cell);
    }
    cell.e += 1;
    cell.entries.set(hash, rank);
  }
}

interface Slot {
  m: number;
  g: number;
  b: number;
}

/**
 * What events add to the aggregates at every level (`add` one at a time, then `deltas`): per
 * merchant, level, bucket and name (and '' for all names) a count and the visitors' distinct
 * sparse entries, and the same per dimension value of the PageViews. Buckets are binned from the
 * epoch, as `date_bin` does in SQL.
 */
export class FoldDeltas {
  private readonly merchants = new Ids();
  private readonly keys = new Ids();
  private readonly slotIds = new Ids();
  private readonly slots: Slot[] = [];
  // Per merchant and 15-minute bucket: the slot of each level (`all`), made once.
  private readonly slotsOf = new Map<number, Map<number, number[]>>();
  private readonly buckets = new Cells();
  private readonly dimensions = new Cells();
  private readonly entries = new Map<string, { hash: number; rank: number }>();
  private readonly all: number[];
  private readonly gi: number[];
  private readonly di: number[];
  private readonly allNames: number;

  constructor(grains: readonly number[], dimensionGrains: readonly number[]) {
    this.all = [...new Set([...grains, ...dimensionGrains])];
    this.gi = grains.map((g) => this.all.indexOf(g));
    this.di = dimensionGrains.map((g) => this.all.indexOf(g));
    this.allNames = this.keys.of('');
  }

  add(event: FoldEvent): void {
    const { slots } = this;
    const m = this.merchants.of(event.merchantId) + 1;
    let quarters = this.slotsOf.get(m);
    if (quarters === undefined) {
      quarters = new Map();
      this.slotsOf.set(m, quarters);
    }
    let at = quarters.get(event.quarter);
    if (at === undefined) {
      at = this.all.map((g) => {
        const b = binned(event.quarter, g);
        const slot = this.slotIds.of(`${m} ${g} ${b}`);
        if (slot === slots.length) slots.push({ m, g, b });
        return slot;
      });
      if (slots.length > SLOTS) throw new Error(`FoldDeltas: more than ${SLOTS} buckets`);
      quarters.set(event.quarter, at);
    }
    let entry = this.entries.get(event.muid);
    if (entry === undefined) {
      entry = entryOf(event.muid);
      this.entries.set(event.muid, entry);
    }
    const { hash, rank } = entry;
    const name = this.keys.of(event.eventName);
    for (const i of this.gi) {
      this.buckets.add(name, at[i]!, slots, '', event.eventName, hash, rank);
      this.buckets.add(this.allNames, at[i]!, slots, '', '', hash, rank);
    }
    if (event.page === null) return;
    for (const [dimension, value] of dimensionValuesOf(event.page) ?? []) {
      const key = this.keys.of(`${dimension}\u0000${value}`);
      for (const i of this.di) this.dimensions.add(key, at[i]!, slots, dimension, value, hash, rank);
    }
  }

  deltas() {
    const isoOf = new Map<number, string>();
    const iso = (start: number) => {
      let text = isoOf.get(start);
      if (text === undefined) {
        text = new Date(start).toISOString();
        isoOf.set(start, text);
      }
      return text;
    };
    const hexOf = (cell: Cell) => encodeSparse(cell.entries).toString('hex');
    return {
      merchants: this.merchants.keys(),
      buckets: [...this.buckets.cells.values()].map(
        (c): BucketDelta => ({ m: c.m, g: c.g, b: iso(c.b), n: c.key, e: c.e, v: hexOf(c) }),
      ),
      dimensions: [...this.dimensions.cells.values()].map(
        (c): DimensionDelta => ({ m: c.m, d: c.dimension, g: c.g, b: iso(c.b), x: c.key, e: c.e, v: hexOf(c) }),
      ),
    };
  }
}

/** The start of `grain` minutes holding `at` (epoch ms), from the epoch. */
function binned(at: number, grain: number): number {
  const width = grain * 60_000;
  return Math.floor(at / width) * width;
}
