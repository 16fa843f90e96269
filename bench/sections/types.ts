import type { BenchContext } from '../lib/context.js';

/** One section of `pnpm bench`: measures, then renders its part of the report. */
export interface Section<R> {
  title: string;
  run(ctx: BenchContext): Promise<R>;
  /** Markdown lines of the report (headings included). */
  report(result: R, settings: BenchContext['settings']): string[];
  /** Each target of the section, for the summary: met or not. */
  targets(result: R): TargetCheck[];
}

export interface TargetCheck {
  what: string;
  target: string;
  value: string;
  met: boolean | null;
}

export const mark = (met: boolean | null) => (met === null ? '-' : met ? 'yes' : '**no**');
