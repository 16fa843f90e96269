/**
 * `pnpm bench`: every part of the API against a baseline measured in the same run, on real
 * PostgreSQL, reported as ratios. Sections: lists, stats, merchants, ingestion, log, stream, export, webhooks
 * (`--section=lists,export` runs some; `--quick` a small scale). See README.md.
 */

import { execFileSync } from 'node:child_process';
import { parseSettings, type SectionName } from './lib/config.js';
import { BENCH_DIR, machine, openContext } from './lib/context.js';
import { log } from './lib/log.js';
import { writeReport } from './lib/report.js';
import { int } from './lib/stats.js';
import type { ExportResult } from './sections/export.js';
import type { IngestionResult } from './sections/ingestion.js';
import type { ListsResult } from './sections/lists.js';
import type { LoadResult } from './sections/load.js';
import type { LogResult } from './sections/log.js';
import type { MerchantsResult } from './sections/merchants.js';
import type { StatsResult } from './sections/stats.js';
import type { StreamResult } from './sections/stream.js';
import { mark, type Section, type TargetCheck } from './sections/types.js';
import type { WebhooksResult } from './sections/webhooks.js';

interface SectionResults {
  lists: ListsResult;
  stats: StatsResult;
  merchants: MerchantsResult;
  ingestion: IngestionResult;
  log: LogResult;
  stream: StreamResult;
  export: ExportResult;
  webhooks: WebhooksResult;
  load: LoadResult;
}

type SectionTable = { [K in SectionName]: Section<SectionResults[K]> };

/**
 * The sections, imported once the SDK and the server are built (`main`): the sections import the
 * SDK as published (its dist), so on a fresh clone they cannot load before the build.
 */
let SECTIONS: SectionTable;

async function loadSections(): Promise<SectionTable> {
  const [exp, ing, lis, lg, mer, str, wh, ld, st] = await Promise.all([
    import('./sections/export.js'),
    import('./sections/ingestion.js'),
    import('./sections/lists.js'),
    import('./sections/log.js'),
    import('./sections/merchants.js'),
    import('./sections/stream.js'),
    import('./sections/webhooks.js'),
    import('./sections/load.js'),
    import('./sections/stats.js'),
  ]);
  return {
    lists: lis.lists,
    stats: st.statsSection,
    merchants: mer.merchants,
    ingestion: ing.ingestion,
    log: lg.logSection,
    stream: str.stream,
    export: exp.exportSection,
    webhooks: wh.webhooksSection,
    load: ld.load,
  };
}

export interface BenchResults {
  startedAt: string;
  machine: ReturnType<typeof machine> & { postgres: string };
  settings: ReturnType<typeof parseSettings>;
  sections: Partial<SectionResults>;
  /** Seconds per section. */
  durations: Partial<Record<SectionName, number>>;
  targets: TargetCheck[];
}

function render(results: BenchResults): string {
  const { machine: m, settings: s } = results;
  const lines = [
    `# Bench ${results.startedAt}`,
    '',
    `${m.cpus} cores, ${m.memoryGb} GB, Node ${m.node}, PostgreSQL ${m.postgres}; load average ${m.loadAverage.toFixed(2)} at the start (the machine is shared); ${s.merchantCount} merchants, 12 event names over 90 days, ${int(s.largeEvents)} events at full scale; ${s.reps} timed requests per shape (after warm-up), pool ${s.poolMax}${s.quick ? '; --quick' : ''}. Sections: ${s.sections.join(', ')}.`,
    '',
    '## Targets',
    '',
    '| what | target | measured | met |',
    '|---|---|---|---|',
    ...results.targets.map((t) => `| ${t.what} | ${t.target} | ${t.value} | ${mark(t.met)} |`),
    '',
  ];
  for (const name of s.sections) lines.push(...renderSection(name, results));
  return `${lines.join('\n')}\n`;
}

function renderSection<K extends SectionName>(name: K, results: BenchResults): string[] {
  const result = results.sections[name] as SectionResults[K] | undefined;
  return result === undefined ? [] : SECTIONS[name].report(result, results.settings);
}

async function runSection<K extends SectionName>(
  name: K,
  ctx: Awaited<ReturnType<typeof openContext>>,
  results: BenchResults,
): Promise<void> {
  const section = SECTIONS[name];
  log(`bench: section ${name}`);
  const started = Date.now();
  const result = await section.run(ctx);
  results.sections[name] = result as BenchResults['sections'][K];
  results.durations[name] = (Date.now() - started) / 1000;
  results.targets.push(...section.targets(result));
}

async function main(): Promise<void> {
  const settings = parseSettings(process.argv.slice(2), BENCH_DIR);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '_');
  const startedAt = new Date().toISOString();
  // The API runs as production runs it: the compiled server, built from the current sources; the
  // SDK is measured as published (its dist).
  log('bench: building the SDK and the server (pnpm --filter @partner/sdk --filter @partner/server build)');
  execFileSync('pnpm', ['--filter', '@partner/sdk', '--filter', '@partner/server', 'build'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  SECTIONS = await loadSections();
  const ctx = await openContext(settings, stamp);
  try {
    const results: BenchResults = {
      startedAt,
      machine: { ...machine(), postgres: ctx.pgVersion },
      settings,
      sections: {},
      durations: {},
      targets: [],
    };
    for (const name of settings.sections) await runSection(name, ctx, results);
    const markdown = render(results);
    const file = writeReport(settings, stamp, markdown, results);
    process.stdout.write(markdown);
    log(`bench: wrote ${file} and .json`);
  } finally {
    await ctx.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
