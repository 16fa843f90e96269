import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

/** The sections of `pnpm bench`, in the order a full run takes them. */
export const SECTION_NAMES = [
  'lists',
  'stats',
  'merchants',
  'ingestion',
  'log',
  'stream',
  'export',
  'webhooks',
  'load',
] as const;
export type SectionName = (typeof SECTION_NAMES)[number];
/**
 * Sections a run without --section leaves out: `load` builds a baseline ref in a worktree and runs
 * two more servers for minutes, the guard run before a release (`--section=load`).
 */
export const ON_REQUEST_ONLY: readonly SectionName[] = ['load'];

export interface Settings {
  quick: boolean;
  sections: SectionName[];
  merchantCount: number;
  /** Events at the large scale (all merchants together). */
  largeEvents: number;
  /** Events at the small scale (growth is large / small). */
  smallEvents: number;
  reps: number;
  /** Seconds per merchant-list load round and per collector-host ingestion run. */
  durationSeconds: number;
  ingestEvents: number;
  /** Events of the merchant whose export is timed (at most the events one merchant holds). */
  exportEvents: number;
  poolMax: number;
  keep: boolean;
  outDir: string;
  /** load: the git ref the mix is compared with (default: the pinned `LOAD_BASELINE_REF`). */
  baselineRef: string | undefined;
  /** load: run this ref (built in a worktree) as "this tree" instead of the working tree. */
  currentRef: string | undefined;
  /** load: also run each route alone on each server (CPU per request by route). */
  loadRoutes: boolean;
  /** load: run both servers from their sources (tsx), as `pnpm loadtest` does, not as `pnpm start`. */
  loadFromSources: boolean;
  /** load: API processes per ref on one database (the connections split between them). */
  loadProcesses: number;
  /** load: timed rounds per row (default 3, --quick 2). */
  loadRounds: number | undefined;
  /** load: seconds per timed round. */
  loadSeconds: number;
  /**
   * stats: seed the statistics' ClickHouse straight (`INSERT ... SELECT FROM numbers()`) instead of
   * PostgreSQL (`--seed-clickhouse`, and always from 50M events: PostgreSQL's copy would not fit).
   */
  seedClickhouse: boolean;
  /** stats: time the statistics of the last build before ClickHouse too (off with --no-baseline or --seed-clickhouse). */
  statsBaseline: boolean;
}

/** From this many events the stats section seeds ClickHouse straight (100M events need about 75 GB in PostgreSQL). */
const SEED_CLICKHOUSE_FROM = 50_000_000;

const USAGE = `pnpm bench [--section=lists,stats,merchants,ingestion,log,stream,export,webhooks,load] [--quick] [--events N] [--small-events N] [--merchants N]
  [--reps N] [--duration S] [--ingest N] [--keep] [--out DIR] [--baseline-ref REF] [--current-ref REF] [--load-seconds S] [--load-routes] [--load-from-sources] [--load-processes N] [--load-rounds N]
  [--seed-clickhouse] [--no-baseline]`;

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name}: must be a positive integer\n${USAGE}`);
  return value;
}

/** Parses the command line (see bench/README.md). */
export function parseSettings(argv: string[], benchDir: string): Settings {
  const { values } = parseArgs({
    args: argv,
    options: {
      section: { type: 'string', multiple: true },
      quick: { type: 'boolean', default: false },
      events: { type: 'string' },
      'small-events': { type: 'string' },
      merchants: { type: 'string' },
      keep: { type: 'boolean', default: false },
      out: { type: 'string' },
      reps: { type: 'string' },
      duration: { type: 'string' },
      ingest: { type: 'string' },
      'baseline-ref': { type: 'string' },
      'current-ref': { type: 'string' },
      'load-seconds': { type: 'string' },
      'load-routes': { type: 'boolean', default: false },
      'load-from-sources': { type: 'boolean', default: false },
      'load-processes': { type: 'string' },
      'load-rounds': { type: 'string' },
      'seed-clickhouse': { type: 'boolean', default: false },
      'no-baseline': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const requested = (values.section ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of requested) {
    if (!(SECTION_NAMES as readonly string[]).includes(name)) {
      throw new Error(`--section: unknown section ${name} (one of ${SECTION_NAMES.join(', ')})`);
    }
  }
  const sections =
    requested.length === 0
      ? SECTION_NAMES.filter((s) => !ON_REQUEST_ONLY.includes(s))
      : SECTION_NAMES.filter((s) => requested.includes(s));
  const quick = values.quick ?? false;
  const merchantCount = positive('merchants', Number(values.merchants ?? 10));
  const largeEvents = positive('events', Number(values.events ?? (quick ? 300_000 : 10_000_000)));
  if (values['small-events'] !== undefined && Number(values['small-events']) >= largeEvents) {
    throw new Error(`--small-events: must be below --events (${largeEvents})\n${USAGE}`);
  }
  return {
    quick,
    sections,
    merchantCount,
    largeEvents,
    // The growth rows' small scale: at most 100k by default (a quick seed); `--small-events` sets a
    // tenth of the large one, the step the statistics' growth target names (10M -> 100M).
    smallEvents:
      values['small-events'] === undefined
        ? Math.min(100_000, Math.max(merchantCount, Math.floor(largeEvents / 10)))
        : positive('small-events', Number(values['small-events'])),
    reps: positive('reps', Number(values.reps ?? (quick ? 60 : 200))),
    durationSeconds: positive('duration', Number(values.duration ?? (quick ? 3 : 10))),
    ingestEvents: positive('ingest', Number(values.ingest ?? (quick ? 20_000 : 100_000))),
    exportEvents: Math.floor(largeEvents / merchantCount),
    poolMax: Number(process.env.DB_POOL_MAX ?? 2 * os.availableParallelism() + 2),
    keep: values.keep ?? false,
    outDir: path.resolve(values.out ?? path.join(benchDir, 'results')),
    baselineRef: values['baseline-ref'],
    currentRef: values['current-ref'],
    loadRoutes: values['load-routes'] ?? false,
    loadFromSources: values['load-from-sources'] ?? false,
    loadProcesses: positive('load-processes', Number(values['load-processes'] ?? 1)),
    loadRounds:
      values['load-rounds'] === undefined ? undefined : positive('load-rounds', Number(values['load-rounds'])),
    loadSeconds: positive('load-seconds', Number(values['load-seconds'] ?? (quick ? 5 : 15))),
    seedClickhouse: (values['seed-clickhouse'] ?? false) || largeEvents >= SEED_CLICKHOUSE_FROM,
    statsBaseline:
      !(values['no-baseline'] ?? false) && !(values['seed-clickhouse'] ?? false) && largeEvents < SEED_CLICKHOUSE_FROM,
  };
}
