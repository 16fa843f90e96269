// The postgres.js queue fix of patches/postgres@3.4.9.patch (patches/README.md), tested on the
// installed module itself: fails on the unpatched src/queue.js (its remove() scans the shifted-out
// prefix, which grows by one slot per query while a queue never empties).
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

interface PgQueue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}
type QueueFactory = <T>(initial?: T[]) => PgQueue<T>;

/** An array that counts the slots its `indexOf` looks at (`slice()` keeps the class: Symbol.species). */
class CountingArray<T> extends Array<T> {
  static scanned = 0;
  override indexOf(x: T, from = 0): number {
    const at = super.indexOf(x, from);
    CountingArray.scanned += (at === -1 ? this.length : at + 1) - Math.max(0, from);
    return at;
  }
}

let Queue: QueueFactory;

beforeAll(async () => {
  // postgres.js's ESM source (package "import" export): <pkg>/src/queue.js beside <pkg>/cjs/src/index.js.
  const cjsEntry = createRequire(import.meta.url).resolve('postgres');
  const file = path.join(path.dirname(cjsEntry), '..', '..', 'src', 'queue.js');
  Queue = ((await import(pathToFileURL(file).href)) as { default: QueueFactory }).default;
});

describe('postgres.js connection queue (patched)', () => {
  it('remove() looks only at the live part, however many queries went through a never-empty queue', () => {
    const queue = Queue(CountingArray.from([0, 1, 2, 3, 4, 5, 6, 7]) as number[]);
    let next = 8;
    let worst = 0;
    for (let i = 0; i < 50_000; i++) {
      queue.push(next++);
      queue.shift();
      const extra = queue.push(next++);
      CountingArray.scanned = 0;
      expect(queue.remove(extra)).toBe(extra);
      worst = Math.max(worst, CountingArray.scanned);
    }
    // Unpatched: the last remove() scans about 50 000 dead slots.
    expect(worst).toBeLessThanOrEqual(16);
    expect(queue.length).toBe(8);
  });

  it('keeps FIFO order across the compaction of the shifted-out prefix', () => {
    const queue = Queue<number>([]);
    const out: number[] = [];
    for (let i = 0; i < 5000; i++) {
      queue.push(i);
      if (i % 3 !== 0) out.push(queue.shift() as number);
    }
    while (queue.length > 0) out.push(queue.shift() as number);
    expect(out).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });

  it('never removes a shifted-out slot (unpatched, remove(undefined) took one and shifted the live items)', () => {
    const queue = Queue<number | undefined>([1, 2, 3]);
    expect(queue.shift()).toBe(1);
    expect(queue.remove(undefined)).toBeNull();
    expect([queue.shift(), queue.shift()]).toEqual([2, 3]);
  });
});
