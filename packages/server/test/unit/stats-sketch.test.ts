import { describe, expect, it } from 'vitest';
import {
  addMuid,
  emptyRegisters,
  encodeSparse,
  estimate,
  HLL_M,
  mergeInto,
  SPARSE_MAX,
  type SparseEntries,
  VisitorUnion,
  visitorsOf,
} from '../../src/features/stats/sketch.js';

function sketchOf(from: number, to: number): Uint8Array {
  const entries: SparseEntries = new Map();
  for (let i = from; i < to; i++) addMuid(entries, `muid_${i}`);
  const registers = emptyRegisters();
  mergeInto(registers, encodeSparse(entries));
  return registers;
}

describe('visitor sketch', () => {
  it('is empty with no visitors and exact for a handful', () => {
    expect(estimate(emptyRegisters())).toBe(0);
    expect(estimate(sketchOf(0, 1))).toBe(1);
    expect(estimate(sketchOf(0, 10))).toBe(10);
  });

  it.each([100, 1_000, 10_000, 40_000, 80_000, 300_000])('estimates %i distinct muids within 2%%', (n) => {
    const estimated = estimate(sketchOf(0, n));
    expect(Math.abs(estimated - n) / n).toBeLessThan(0.02);
  });

  it('counts a union of sparse sketches exactly, repeats once (no register collisions at small counts)', () => {
    // 33 visitors whose registers collide at precision 14 were the first version's 3% error.
    for (const n of [1, 2, 33, 100, 777, SPARSE_MAX, 20_000]) {
      const union = new VisitorUnion();
      for (let from = 0; from < n; from += 250) {
        const entries: SparseEntries = new Map();
        for (let i = from; i < Math.min(n, from + 300); i++) addMuid(entries, `small_${n}_${i}`);
        union.add(encodeSparse(entries));
      }
      expect(union.count()).toBe(n);
    }
    expect(visitorsOf(null, null)).toBe(0);
  });

  it('counts a smaller union exactly after a larger one (the set is reused between counts)', () => {
    const unionOf = (n: number) => {
      const entries: SparseEntries = new Map();
      for (let i = 0; i < n; i++) addMuid(entries, `reused_${n}_${i}`);
      const union = new VisitorUnion();
      union.add(encodeSparse(entries));
      return union.count();
    };
    expect([20_000, 33, 20_000, 1, 777].map(unionOf)).toEqual([20_000, 33, 20_000, 1, 777]);
  });

  it('unites dense parts and sparse parts as the registers of all of them', () => {
    const a = sketchOf(0, 30_000);
    const b = sketchOf(20_000, 60_000);
    const entries: SparseEntries = new Map();
    for (let i = 55_000; i < 70_000; i++) addMuid(entries, `muid_${i}`);
    const sparse = encodeSparse(entries);
    const registers = emptyRegisters();
    for (const part of [a, b, sparse]) mergeInto(registers, part);
    const union = new VisitorUnion();
    union.add(a);
    union.add(sparse);
    union.add(b);
    expect(union.count()).toBe(estimate(registers));
    expect(Math.abs(union.count() - 70_000) / 70_000).toBeLessThan(0.02);
    // One dense sketch alone is estimated as it is.
    const alone = new VisitorUnion();
    alone.add(a);
    expect(alone.count()).toBe(estimate(a));
  });

  it('counts the zero hash and hashes that share a slot as distinct', () => {
    // Entries written by hand: hash (4 bytes) and rank; the set's slot is (h ^ h >>> 16) & mask.
    const entry = (hash: number) => {
      const out = Buffer.alloc(5);
      out.writeUInt32BE(hash >>> 0, 0);
      out[4] = 1;
      return out;
    };
    const hashes = [0, 0, 1, 0x10001, 0x10001, 0xffffffff, 0x20002, 1];
    const sparse = Buffer.concat(hashes.map(entry));
    expect(visitorsOf(sparse, null)).toBe(new Set(hashes).size);
  });

  it('merges sparse and dense forms as the union, repeats counting once', () => {
    const union = emptyRegisters();
    const a = sketchOf(0, 30_000);
    mergeInto(union, a); // dense
    const entries: SparseEntries = new Map();
    for (let i = 20_000; i < 50_000; i++) addMuid(entries, `muid_${i}`);
    mergeInto(union, encodeSparse(entries)); // sparse
    expect(a.length).toBe(HLL_M);
    expect(Math.abs(estimate(union) - 50_000) / 50_000).toBeLessThan(0.02);
  });
});
