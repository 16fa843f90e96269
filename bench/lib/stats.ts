import { quantile } from '@partner/server/bench';

/** The q-quantile (0..1) of the samples, nearest rank (the server's testing helper, shared). */
export { quantile };

export interface Latency {
  p50: number;
  p95: number;
  n: number;
}

export const latency = (samples: readonly number[]): Latency => ({
  p50: quantile(samples, 0.5),
  p95: quantile(samples, 0.95),
  n: samples.length,
});

export const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)} ms` : 'n/a');
export const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a');
export const int = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');

/** Milliseconds since `start` (a `process.hrtime.bigint()`). */
export const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
