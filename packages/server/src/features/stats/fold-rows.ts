import { entryOf } from './sketch.js';

/** An event as the fold reads it (fold.ts): merchant, 15-minute bucket (epoch ms), name, muid, PageView data. */
export interface FoldEvent {
  merchantId: string;
  quarter: number;
  eventName: string;
  muid: string;
  /** A PageView's data as stored (JSON text); null for any other event. */
  page: string | null;
}

/** One table's cells, column by column: slot and key (1-based, into FoldDeltas' lists), events, sketch (hex). */
export interface CellColumns {
  slot: number[];
  key: number[];
  events: number[];
  visitors: string[];
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
  slot: number;
  key: number;
  e: number;
  /** Entries as hash * 64 + rank: the first, then (from a second visitor on) all of them, repeats allowed. */
  first: number;
  more: Float64Array | null;
  n: number;
}

/** Ids of repeated strings, or pairs of them (a dimension and its value), in the order first seen. */
class Ids {
  // By first, then second: no concatenated key to build and hash per lookup.
  private readonly ids = new Map<string, Map<string, number>>();
  readonly first: string[] = [];
  readonly second: string[] = [];

  of(first: string, second = ''): number {
    let inner = this.ids.get(first);
    if (inner === undefined) {
      inner = new Map();
      this.ids.set(first, inner);
    }
    let id = inner.get(second);
    if (id === undefined) {
      id = this.first.length;
      inner.set(second, id);
      this.first.push(first);
      this.second.push(second);
    }
    return id;
  }
}

/** The cells of one table, by key id (a name, or a dimension and value), then slot: small integers, no string to hash. */
class Cells {
  private readonly byKey = new Map<number, Map<number, Cell>>();

  add(key: number, slot: number, entry: number) {
    let cells = this.byKey.get(key);
    if (cells === undefined) {
      cells = new Map();
      this.byKey.set(key, cells);
    }
    const cell = cells.get(slot);
    if (cell === undefined) {
      cells.set(slot, { slot, key, e: 1, first: entry, more: null, n: 1 });
      return;
    }
    cell.e += 1;
    // A typed array, not a Map: a 32-bit hash is no small integer, and a Map of them allocated per entry.
    if (cell.more === null) {
      if (entry === cell.first) return;
      cell.more = new Float64Array(4);
      cell.more[0] = cell.first;
    } else if (cell.more[cell.n - 1] === entry) return;
    else if (cell.n === cell.more.length) {
      const grown = new Float64Array(cell.n * 2);
      grown.set(cell.more);
      cell.more = grown;
    }
    cell.more[cell.n++] = entry;
  }

  columns(): CellColumns {
    const columns: CellColumns = { slot: [], key: [], events: [], visitors: [] };
    for (const cells of this.byKey.values()) {
      for (const cell of cells.values()) {
        columns.slot.push(cell.slot + 1);
        columns.key.push(cell.key + 1);
        columns.events.push(cell.e);
        columns.visitors.push(cell.more === null ? hexOf(cell.first) : sparseHex(cell.more.subarray(0, cell.n)));
      }
    }
    return columns;
  }
}

/** An entry (hash * 64 + rank) in the sparse stored form (sketch.ts): 4 bytes of hash, 1 of rank. */
const hexOf = (entry: number) =>
  Math.floor(entry / 64)
    .toString(16)
    .padStart(8, '0') + (entry % 64).toString(16).padStart(2, '0');

/** Distinct entries in the sparse stored form, as hex. */
function sparseHex(entries: Float64Array): string {
  entries.sort();
  const out = Buffer.alloc(entries.length * 5);
  let at = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (i > 0 && entry === entries[i - 1]) continue;
    out.writeUInt32BE(Math.floor(entry / 64), at);
    out[at + 4] = entry % 64;
    at += 5;
  }
  return out.subarray(0, at).toString('hex');
}

/**
 * What events add to the aggregates at every level (`add` one at a time, then `deltas`): per
 * merchant, level, bucket and name (and '' for all names) a count and the visitors' distinct
 * sparse entries, and the same per dimension value of the PageViews. Buckets are binned from the
 * epoch, as `date_bin` does in SQL.
 */
export class FoldDeltas {
  private readonly merchants = new Ids();
  /** Event names of `stat_buckets` (first), dimensions and values of `stat_dimensions` (first, second). */
  private readonly names = new Ids();
  private readonly values = new Ids();
  /** Per merchant and level (index m * levels + level): bucket start (minutes) -> slot. */
  private readonly slotIds = new Map<number, Map<number, number>>();
  private readonly slots = { m: [] as number[], g: [] as number[], b: [] as number[] };
  // Per merchant and 15-minute bucket (its number since the epoch): the slot of each level (`all`), made once.
  private readonly slotsOf = new Map<number, Map<number, number[]>>();
  private readonly buckets = new Cells();
  private readonly dimensions = new Cells();
  private readonly entries = new Map<string, number>();
  private readonly all: number[];
  private readonly gi: number[];
  private readonly di: number[];
  private readonly allNames: number;

  constructor(grains: readonly number[], dimensionGrains: readonly number[]) {
    this.all = [...new Set([...grains, ...dimensionGrains])];
    this.gi = grains.map((g) => this.all.indexOf(g));
    this.di = dimensionGrains.map((g) => this.all.indexOf(g));
    this.allNames = this.names.of('');
  }

  add(event: FoldEvent): void {
    const m = this.merchants.of(event.merchantId) + 1;
    let quarters = this.slotsOf.get(m);
    if (quarters === undefined) {
      quarters = new Map();
      this.slotsOf.set(m, quarters);
    }
    const quarter = event.quarter / 900_000;
    let at = quarters.get(quarter);
    if (at === undefined) {
      at = this.all.map((g, level) => this.slotOf(m, level, binned(event.quarter, g)));
      quarters.set(quarter, at);
    }
    let entry = this.entries.get(event.muid);
    if (entry === undefined) {
      const { hash, rank } = entryOf(event.muid);
      entry = hash * 64 + rank;
      this.entries.set(event.muid, entry);
    }
    const name = this.names.of(event.eventName);
    for (const i of this.gi) {
      this.buckets.add(name, at[i]!, entry);
      this.buckets.add(this.allNames, at[i]!, entry);
    }
    if (event.page === null) return;
    for (const [dimension, value] of dimensionValuesOf(event.page) ?? []) {
      const key = this.values.of(dimension, value);
      for (const i of this.di) this.dimensions.add(key, at[i]!, entry);
    }
  }

  /** Everything added, as arrays for the fold's upserts (merchants 1-based, bucket starts in epoch seconds). */
  deltas() {
    return {
      merchants: this.merchants.first,
      slots: this.slots,
      names: this.names.first,
      dimensions: this.values.first,
      values: this.values.second,
      bucketCells: this.buckets.columns(),
      dimensionCells: this.dimensions.columns(),
    };
  }

  private slotOf(m: number, level: number, start: number): number {
    const index = m * this.all.length + level;
    let starts = this.slotIds.get(index);
    if (starts === undefined) {
      starts = new Map();
      this.slotIds.set(index, starts);
    }
    let slot = starts.get(start / 60_000);
    if (slot === undefined) {
      slot = this.slots.m.length;
      starts.set(start / 60_000, slot);
      this.slots.m.push(m);
      this.slots.g.push(this.all[level]!);
      this.slots.b.push(start / 1000);
    }
    return slot;
  }
}

/** The start of `grain` minutes holding `at` (epoch ms), from the epoch. */
function binned(at: number, grain: number): number {
  const width = grain * 60_000;
  return Math.floor(at / width) * width;
}
