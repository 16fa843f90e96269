/**
 * A read's decomposition of its points into the fold's levels (fold.ts GRAINS): each point
 * [start, end) is read as whole UTC days, then whole hours, then 15-minute buckets at its edges.
 * A point of a zone whose midnight is UTC's is one daily row; elsewhere a day is read as 23-25
 * hourly rows (and 15-minute rows at a half-hour offset): docs/decisions/stats.md. With `weeks`
 * (the dimensions' rows, fold.ts DIMENSION_GRAINS), whole 7-day weeks from the epoch come first.
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

function hoursAndQuarters(lo: number, hi: number, p: number, out: Segment[]): void {
  if (lo >= hi) return;
  const first = ceilTo(lo, HOUR);
  const last = floorTo(hi, HOUR);
  if (first >= last) {
    out.push({ grain: 15, lo, hi, p });
    return;
  }
  if (lo < first) out.push({ grain: 15, lo, hi: first, p });
  out.push({ grain: 60, lo: first, hi: last, p });
  if (last < hi) out.push({ grain: 15, lo: last, hi, p });
}

/** Whole days of [lo, hi) (UTC midnights), with `weeks` whole weeks among them. */
function days(lo: number, hi: number, p: number, weeks: boolean, out: Segment[]): void {
  const first = weeks ? ceilTo(lo, WEEK) : hi;
  const last = weeks ? floorTo(hi, WEEK) : hi;
  if (first >= last) {
    out.push({ grain: 1440, lo, hi, p });
    return;
  }
  if (lo < first) out.push({ grain: 1440, lo, hi: first, p });
  out.push({ grain: 10_080, lo: first, hi: last, p });
  if (last < hi) out.push({ grain: 1440, lo: last, hi, p });
}

/** The segments of the points [starts[i], starts[i+1]) (the last ending at `end`); instants on the 15-minute grid. */
export function segmentsOf(starts: readonly number[], end: number, weeks = false): Segment[] {
  const out: Segment[] = [];
  starts.forEach((lo, i) => {
    const hi = starts[i + 1] ?? end;
    if (lo % QUARTER !== 0 || hi % QUARTER !== 0) throw new Error('stats: a point edge off the 15-minute grid');
    const first = ceilTo(lo, DAY);
    const last = floorTo(hi, DAY);
    if (first >= last) {
      hoursAndQuarters(lo, hi, i + 1, out);
      return;
    }
    hoursAndQuarters(lo, first, i + 1, out);
    days(first, last, i + 1, weeks, out);
    hoursAndQuarters(last, hi, i + 1, out);
  });
  return out;
}

/** The segments as SQL array literals, for `unnest(grains::int[], los::timestamptz[], his::timestamptz[], ps::int[])`. */
export function segmentArrays(segments: readonly Segment[]) {
  const iso = (t: number) => new Date(t).toISOString();
  return {
    grains: `{${segments.map((s) => s.grain).join(',')}}`,
    los: `{${segments.map((s) => iso(s.lo)).join(',')}}`,
    his: `{${segments.map((s) => iso(s.hi)).join(',')}}`,
    ps: `{${segments.map((s) => s.p).join(',')}}`,
  };
}
