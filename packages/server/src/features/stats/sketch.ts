import * as crypto from 'node:crypto';

/**
 * HyperLogLog of visitors (muid), precision 14 (16384 registers, standard error 1.04/sqrt(m) ~0.8%),
 * with an exact sparse form for small counts (HLL++'s idea, docs/decisions/stats.md). Hand-written
 * (the decision says why no npm library fits). From a muid's md5: `hash` = its first 32 bits (the
 * register index is the top 14 of them), `rank` = 1 + leading zeros of the next 32 bits (33 when all
 * are zero).
 *
 * Stored form (bytea, column `visitors`): dense = exactly 16384 bytes, one register each; sparse =
 * 5 bytes per entry (hash, 4 bytes big-endian, then rank), repeats allowed. A sparse length is a
 * multiple of 5, so it is never 16384. The fold builds them (fold-rows.ts, `entryOf`), the recount
 * and the backfills in SQL (from `md5(muid)`);
 * `stats_hll_merge` / `stats_hll_compact` (migration 0027) append sparse ones, drop repeats past
 * SPARSE_MAX entries and turn a row dense only when more than SPARSE_MAX distinct hashes remain.
 * A union of sparse sketches counts distinct 32-bit hashes: exact but for hash collisions
 * (about n^2 / 2^33 of them, corrected by linear counting), so small ranges are not subject to
 * register collisions (one at 33 visitors was the 3% error of the first version). `registerOf` and
 * `entryOf` are the references the SQL is tested against.
 */
const HLL_P = 14;
export const HLL_M = 1 << HLL_P;
const Q = 32;
/** Sparse entries kept before a sketch turns dense (5 bytes each: just under the dense 16384 bytes). */
export const SPARSE_MAX = 3276;
const ENTRY = 5;
const TWO_32 = 2 ** 32;

const md5Hex = (text: string) => crypto.createHash('md5').update(text).digest('hex');

/** A muid's register: index * 64 + rank (rank <= 33). */
export function registerOf(muid: string): number {
  const hex = md5Hex(muid);
  const index = Number.parseInt(hex.slice(0, 4), 16) >>> (16 - HLL_P);
  const rest = Number.parseInt(hex.slice(8, 16), 16);
  return index * 64 + (rest === 0 ? Q + 1 : Math.clz32(rest) + 1);
}

/** A muid's sparse entry: 32-bit hash and rank. */
export function entryOf(muid: string): { hash: number; rank: number } {
  const hex = md5Hex(muid);
  const rest = Number.parseInt(hex.slice(8, 16), 16);
  return { hash: Number.parseInt(hex.slice(0, 8), 16), rank: rest === 0 ? Q + 1 : Math.clz32(rest) + 1 };
}

/** A batch's entries of one sketch: hash -> rank. */
export type SparseEntries = Map<number, number>;

export function addMuid(entries: SparseEntries, muid: string): void {
  const { hash, rank } = entryOf(muid);
  entries.set(hash, rank);
}

/** The sparse stored form of `entries`. */
export function encodeSparse(entries: SparseEntries): Buffer {
  const out = Buffer.alloc(entries.size * ENTRY);
  let at = 0;
  for (const [hash, rank] of entries) {
    out.writeUInt32BE(hash, at);
    out[at + 4] = rank;
    at += ENTRY;
  }
  return out;
}

/** Folds a stored sketch (dense or sparse) into `registers` (register-wise max). */
export function mergeInto(registers: Uint8Array, stored: Uint8Array | null | undefined): void {
  if (!stored || stored.length === 0) return;
  if (stored.length === HLL_M) {
    mergeDense(registers, stored);
    return;
  }
  for (let at = 0; at + ENTRY <= stored.length; at += ENTRY) {
    const index = (stored[at]! << 6) | (stored[at + 1]! >> 2);
    const rank = stored[at + 4]!;
    if (rank > registers[index]!) registers[index] = rank;
  }
}

/** Folds dense sketches, concatenated (a read's `string_agg`), into `registers`. */
function mergeDense(registers: Uint8Array, dense: Uint8Array): void {
  for (let at = 0; at + HLL_M <= dense.length; at += HLL_M) {
    for (let i = 0; i < HLL_M; i++) if (dense[at + i]! > registers[i]!) registers[i] = dense[at + i]!;
  }
}

export function emptyRegisters(): Uint8Array {
  return new Uint8Array(HLL_M);
}

/**
 * Distinct visitors of a union of sketches, given as the concatenation of its sparse ones and the
 * concatenation of its dense ones (what a read's `string_agg` returns): exact count of distinct
 * hashes when every one is sparse, else the HyperLogLog estimate of all registers.
 */
export function visitorsOf(sparse: Uint8Array | null | undefined, dense: Uint8Array | null | undefined): number {
  return unionCount(sparse ? [sparse] : [], dense ? [dense] : []);
}

/** visitorsOf of the concatenations of `sparse` and of `dense`, without concatenating them. */
function unionCount(sparse: readonly Uint8Array[], dense: readonly Uint8Array[]): number {
  let entries = 0;
  for (const part of sparse) entries += Math.floor(part.length / ENTRY);
  const first = dense.find((part) => part.length >= HLL_M);
  if (first) {
    // One dense sketch alone (a point of one daily row) is estimated as it is: no copy.
    if (dense.length === 1 && first.length === HLL_M && entries === 0) return estimate(first);
    const registers = emptyRegisters();
    for (const part of dense) mergeDense(registers, part);
    for (const part of sparse) mergeInto(registers, part);
    return estimate(registers);
  }
  if (entries === 0) return 0;
  const distinct = distinctHashes(sparse, entries);
  // Linear counting over 2^32 "registers": corrects the expected hash collisions (1 at ~93k).
  return Math.round(-TWO_32 * Math.log1p(-distinct / TWO_32));
}

/** distinctHashes' table, kept between calls: a 30-day breakdown's `other` row filled a new 1 MB one per read. */
let table = new Uint32Array(16);

/**
 * Distinct 32-bit hashes among the `entries` sparse entries of `parts`: an open-addressing set (the
 * hashes are md5 bits, uniform), linear where a sort was n log n (133k entries: 3.5 ms, not 12).
 */
function distinctHashes(parts: readonly Uint8Array[], entries: number): number {
  let size = 16;
  while (size < entries * 2) size *= 2;
  if (table.length < size) table = new Uint32Array(size);
  else table.fill(0, 0, size);
  const mask = size - 1;
  // 0 marks an empty slot, so a zero hash is counted apart.
  let zero = 0;
  let distinct = 0;
  for (const part of parts) {
    const view = new DataView(part.buffer, part.byteOffset, part.byteLength);
    for (let at = 0; at + ENTRY <= part.length; at += ENTRY) {
      const hash = view.getUint32(at);
      if (hash === 0) {
        zero = 1;
        continue;
      }
      for (let slot = (hash ^ (hash >>> 16)) & mask; ; slot = (slot + 1) & mask) {
        const held = table[slot];
        if (held === 0) {
          table[slot] = hash;
          distinct++;
          break;
        }
        if (held === hash) break;
      }
    }
  }
  return distinct + zero;
}

/** Accumulates stored sketches (the rows of a breakdown value) and counts their union. */
export class VisitorUnion {
  private readonly sparse: Uint8Array[] = [];
  private readonly dense: Uint8Array[] = [];
  add(stored: Uint8Array | null | undefined): void {
    if (!stored || stored.length === 0) return;
    (stored.length === HLL_M ? this.dense : this.sparse).push(stored);
  }
  /** Adds a concatenation of sparse sketches and one of dense ones (a read's `string_agg`s). */
  addConcatenated(sparse: Uint8Array | null | undefined, dense: Uint8Array | null | undefined): void {
    if (sparse && sparse.length > 0) this.sparse.push(sparse);
    if (dense && dense.length > 0) this.dense.push(dense);
  }
  count(): number {
    return unionCount(this.sparse, this.dense);
  }
}

/**
 * Ertl's improved estimator ("New cardinality estimation algorithms for HyperLogLog sketches",
 * 2017): no bias tables and no switch between linear counting and the raw estimate, so the error
 * stays near 1.04/sqrt(m) from one visitor to billions.
 */
export function estimate(registers: Uint8Array): number {
  const counts = new Array<number>(Q + 2).fill(0);
  for (let i = 0; i < HLL_M; i++) counts[registers[i]!]! += 1;
  if (counts[0] === HLL_M) return 0;
  const m = HLL_M;
  let z = m * tau(1 - counts[Q + 1]! / m);
  for (let k = Q; k >= 1; k--) z = 0.5 * (z + counts[k]!);
  z += m * sigma(counts[0]! / m);
  const alphaInf = 0.5 / Math.LN2;
  return Math.round((alphaInf * m * m) / z);
}

function sigma(x: number): number {
  if (x === 1) return Number.POSITIVE_INFINITY;
  let y = 1;
  let z = x;
  let previous: number;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (z !== previous);
  return z;
}

function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  let previous: number;
  do {
    x = Math.sqrt(x);
    previous = z;
    y *= 0.5;
    z -= (1 - x) ** 2 * y;
  } while (z !== previous);
  return z / 3;
}
