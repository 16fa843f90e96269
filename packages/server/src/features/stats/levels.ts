/**
 * A read's decomposition of its points into the fold's levels (fold.ts GRAINS): each point
 * [start, end) is read as whole 7-day weeks from the epoch, then whole UTC days, then whole hours,
 * then 15-minute buckets at its edges. A point of a zone whose midnight is UTC's is one daily row;
 * elsewhere a day is read as 23-25 hourly rows (and 15-minute rows at a half-hour offset):
 * docs/decisions/stats.md.
 */
const QUARTER = 900_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const WEEK = 7 * DAY;

/** One run of buckets of one level: rows with `lo <= bucket < hi` at `grain` minutes, for point `p`. */
export interface Segment {
  grain: 15 | 60 | 1440 | 10_080;
  lo: number;
  hi: number;
  p: number;
}

const ceilTo = (t: number, unit: number) => Math.ceil(t / unit) * unit;
const floorTo = (t: number, unit: number) => Math.floor(t / unit) * unit;

type Run = (lo: number, hi: number) => void;

/** [lo, hi) as its whole `unit`s (`whole`) between finer `edges`, or all `edges` when no whole unit fits. */
function split(lo: number, hi: number, unit: number, whole: Run, edges: Run): void {
  const first = ceilTo(lo, unit);
  const last = floorTo(hi, unit);
  if (first >= last) {
    edges(lo, hi);
    return;
  }
  edges(lo, first);
  whole(first, last);
  edges(last, hi);
}

/** The segments of the points [starts[i], starts[i+1]) (the last ending at `end`); instants on the 15-minute grid. */
export function segmentsOf(starts: readonly number[], end: number): Segment[] {
  const out: Segment[] = [];
  starts.forEach((lo, i) => {
    const hi = starts[i + 1] ?? end;
    if (lo % QUARTER !== 0 || hi % QUARTER !== 0) throw new Error('stats: a point edge off the 15-minute grid');
    const at =
      (grain: Segment['grain']): Run =>
      (a, b) => {
        if (a < b) out.push({ grain, lo: a, hi: b, p: i + 1 });
      };
    const hours: Run = (a, b) => split(a, b, HOUR, at(60), at(15));
    const days: Run = (a, b) => split(a, b, WEEK, at(10_080), at(1440));
    split(lo, hi, DAY, days, hours);
  });
  return out;
}

/** The segments as SQL array literals, for `unnest(grains::int[], los::timestamptz[], his::timestamptz[], ps::int[])`. */
const iso = (t: number) => new Date(t).toISOString();

export function segmentArrays(segments: readonly Segment[]) {
  return {
    grains: `{${segments.map((s) => s.grain).join(',')}}`,
    los: `{${segments.map((s) => iso(s.lo)).join(',')}}`,
    his: `{${segments.map((s) => iso(s.hi)).join(',')}}`,
    ps: `{${segments.map((s) => s.p).join(',')}}`,
  };
}

/** The points [starts[i], starts[i+1]) (the last ending at `end`) as SQL array literals of their bounds. */
export function pointArrays(starts: readonly number[], end: number) {
  return {
    los: `{${starts.map(iso).join(',')}}`,
    his: `{${starts.map((_, i) => iso(starts[i + 1] ?? end)).join(',')}}`,
  };
}
