import * as crypto from 'node:crypto';

/**
 * HyperLogLog of visitors (muid), precision 14: 16384 registers, standard error 1.04/sqrt(m) ~0.8%.
 * Hand-written (docs/decisions/stats.md says why no npm library fits). The register of a muid comes
 * from its md5: index = the first 14 bits, rank = 1 + leading zeros of the next 32 bits (33 when
 * all are zero).
 *
 * Stored form (bytea, column `visitors`): dense = exactly 16384 bytes, one register each; sparse =
 * 3 bytes per entry (index high, index low, rank), duplicates allowed (the larger rank wins).
 * A sparse length is a multiple of 3, so it is never 16384. The database builds them (fold.ts,
 * the same registers from `md5(muid)`); `stats_hll_merge` (migration 0017) appends small sparse
 * ones and turns a row dense once it grows. The JS side here reads them; `registerOf` is the
 * reference the SQL is tested against.
 */
const HLL_P = 14;
export const HLL_M = 1 << HLL_P;
const Q = 32;

const md5Hex = (text: string) => crypto.createHash('md5').update(text).digest('hex');

/** A muid's register: index * 64 + rank (rank <= 33). */
export function registerOf(muid: string): number {
  const hex = md5Hex(muid);
  const index = Number.parseInt(hex.slice(0, 4), 16) >>> (16 - HLL_P);
  const rest = Number.parseInt(hex.slice(8, 16), 16);
  return index * 64 + (rest === 0 ? Q + 1 : Math.clz32(rest) + 1);
}

/** A batch's entries of one sketch: register index -> largest rank. */
export type SparseEntries = Map<number, number>;

export function addMuid(entries: SparseEntries, muid: string): void {
  const register = registerOf(muid);
  const index = register >>> 6;
  const rank = register & 63;
  if ((entries.get(index) ?? 0) < rank) entries.set(index, rank);
}

/** The sparse stored form of `entries`. */
export function encodeSparse(entries: SparseEntries): Buffer {
  let out = '';
  for (const [index, rank] of entries) out += (index * 256 + rank).toString(16).padStart(6, '0');
  return Buffer.from(out, 'hex');
}

/** Folds a stored sketch (dense or sparse) into `registers` (register-wise max). */
export function mergeInto(registers: Uint8Array, stored: Uint8Array | null | undefined): void {
  if (!stored || stored.length === 0) return;
  if (stored.length === HLL_M) {
    for (let i = 0; i < HLL_M; i++) if (stored[i]! > registers[i]!) registers[i] = stored[i]!;
    return;
  }
  for (let at = 0; at + 2 < stored.length; at += 3) {
    const index = (stored[at]! << 8) | stored[at + 1]!;
    const rank = stored[at + 2]!;
    if (rank > registers[index]!) registers[index] = rank;
  }
}

export function emptyRegisters(): Uint8Array {
  return new Uint8Array(HLL_M);
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
