import { parseArgs } from 'node:util';
import { isStorableInstant, TRIGGERABLE_TAG_EVENTS, type TriggerableTagEvent } from '@partner/shared-schemas';
import { openDatabaseFromEnv } from '../app.js';
import { statsEngineOf } from '../compose.js';
import type { DatabaseHandle } from '../db/client.js';
import { StoreLockedError } from '../db/lock.js';
import {
  DEFAULT_ROTATION_OVERLAP_MS,
  type KeyMode,
  listPartners,
  revokeApiKeys,
  rotateApiKey,
} from '../features/partners/key-admin.js';
import { onboardPartner } from '../features/partners/onboard-partner.js';
import { type LoadProgress, StatsStore } from '../features/stats/store.js';
import { tagStateConfigFromEnv } from '../features/tags/lifecycle/tag-state.js';
import { triggerTagEventByOperator } from '../features/tags/trigger-tag.js';
import { parseDuration } from '../kernel/duration.js';
import { type Env, EnvError, parseEnv } from '../kernel/env.js';
import { AppError } from '../kernel/errors.js';
import { createLogger } from '../kernel/logger.js';
import { StartupError, statsStartupError } from '../kernel/startup-error.js';

const USAGE = `Partner onboarding (offline): uses the server's database settings (DATABASE_URL, or the embedded store in DATA_DIR).

Usage:
  pnpm partner onboard --name <name> --domain <partner domain> [--json]
  pnpm partner list [--json]
  pnpm partner rotate-key <partnerId> [--mode live|test] [--expire-old-in 24h] [--json]
  pnpm partner revoke-key <partnerId> [--mode live|test] [--json]
  pnpm partner trigger <${TRIGGERABLE_TAG_EVENTS.join('|')}> --tag <tagId> [--json]
  pnpm partner stats-load [--json]

onboard prints a live key (mp_live_) and a test key (mp_test_: test mode's own data, simulated DNS).
rotate-key keeps the partner's current keys of that mode (default live) valid for the overlap
(default 24h; 0 ends them now); a partner onboarded before test mode gets its first test key with
--mode test. revoke-key ends every key of that mode at once. trigger drives a test-mode tag into a
state with its real webhook (a running server delivers it). stats-load copies the events stored in
PostgreSQL into the statistics (ClickHouse: CLICKHOUSE_URL, or chDB in DATA_DIR while the server is
stopped); a server does it by itself once at start, and a load cut short is resumed by running it again.
`;

class UsageError extends Error {}

function out(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/** `--expire-old-in` in ms (default 24 h). */
function overlapOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_ROTATION_OVERLAP_MS;
  const parsed = parseDuration(value);
  if (parsed === null) throw new UsageError('--expire-old-in takes a duration such as 0, 30m, 24h or 7d.');
  // The expiry is stored as a timestamptz: past year 9999 the database (or Date) refuses it.
  if (!isStorableInstant(Date.now() + parsed)) throw new UsageError('--expire-old-in must end before year 10000.');
  return parsed;
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      domain: { type: 'string' },
      json: { type: 'boolean', default: false },
      'expire-old-in': { type: 'string' },
      mode: { type: 'string', default: 'live' },
      tag: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, partnerId] = positionals;
  const mode = values.mode as KeyMode;
  if (values.help || !command || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (!['onboard', 'list', 'rotate-key', 'revoke-key', 'trigger', 'stats-load'].includes(command)) {
    throw new UsageError(`Unknown command "${command}".`);
  }
  if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode is live or test.');
  const event = positionals[1] as TriggerableTagEvent;
  if (command === 'trigger' && (!TRIGGERABLE_TAG_EVENTS.includes(event) || !values.tag)) {
    throw new UsageError(`trigger needs an event (${TRIGGERABLE_TAG_EVENTS.join(', ')}) and --tag <tagId>.`);
  }
  if ((command === 'rotate-key' || command === 'revoke-key') && !partnerId) {
    throw new UsageError(`${command} needs a partnerId (see \`pnpm partner list\`).`);
  }
  if (command === 'onboard' && (!values.name || !values.domain)) {
    throw new UsageError('onboard needs --name and --domain.');
  }
  const overlapMs = overlapOf(values['expire-old-in']);

  const env = parseEnv();
  const database = await openDatabaseFromEnv(env, 'the partner CLI');
  const json = values.json ?? false;
  try {
    const db = database.db;
    if (command === 'onboard') {
      const p = await onboardPartner(db, { name: values.name!, domain: values.domain! }, env.TAG_TARGET_HOST);
      const result = { partnerId: p.partnerId, apiKey: p.apiKey, testApiKey: p.testApiKey, record: p.record };
      out(
        json,
        result,
        [
          `Partner "${p.name}" onboarded: ${p.partnerId}`,
          '',
          `API key (shown once, store it now): ${p.apiKey}`,
          `Test key (shown once; test mode, docs/decisions/test-mode.md): ${p.testApiKey}`,
          '',
          'Publish this DNS record once on the partner domain; tags on it and under it are then live at once:',
          `  ${p.record.name}.${p.domain}  ${p.record.ttl}  IN  CNAME  ${p.record.value}`,
        ].join('\n'),
      );
    } else if (command === 'list') {
      const partners = await listPartners(db);
      out(json, partners, partnersText(partners));
    } else if (command === 'rotate-key') {
      const result = await rotateApiKey(db, partnerId!, overlapMs, mode);
      out(
        json,
        { partnerId, mode, ...result },
        `New ${mode} API key (shown once, store it now): ${result.apiKey}\nPrevious ${mode} keys stay valid until ${result.oldKeysExpireAt}.`,
      );
    } else if (command === 'stats-load') {
      const progress = await loadStats(env, database, json);
      out(
        json,
        progress,
        `Loaded: ${progress.events} events of ${progress.merchants} merchants in ${progress.ranges} ranges.`,
      );
    } else if (command === 'revoke-key') {
      const revoked = await revokeApiKeys(db, partnerId!, mode);
      out(json, { partnerId, mode, revoked }, `Revoked ${revoked} ${mode} key(s) of partner ${partnerId}.`);
    } else {
      const tag = await triggerTagEventByOperator(db, tagStateConfigFromEnv(env), { tagId: values.tag!, event });
      out(
        json,
        tag,
        `${event} triggered: tag ${tag.tagId} is ${tag.status}, ${tag.isConnected ? 'connected' : 'disconnected'}; its webhook is queued.`,
      );
    }
  } finally {
    await database.close();
  }
}

/** `pnpm partner list` as text: each partner and its keys. */
function partnersText(partners: Awaited<ReturnType<typeof listPartners>>): string {
  if (partners.length === 0) return 'No partners yet: `pnpm partner onboard --name <name> --domain <domain>`.';
  const lines = partners.map((p) => {
    const keys = p.keys
      .map(
        (k) =>
          `    ${k.mode}  ${k.prefix}…  created ${k.createdAt}${k.revokedAt ? `  revoked ${k.revokedAt}` : ''}${k.expiresAt ? `  expires ${k.expiresAt}` : ''}`,
      )
      .join('\n');
    return `${p.partnerId}  ${p.name}  ${p.domain}  (record ${p.recordName}.${p.domain})\n${keys}`;
  });
  return lines.join('\n');
}

/** Every stored event into the statistics, merchant by merchant (features/stats/load.ts). */
async function loadStats(env: Env, database: DatabaseHandle, json: boolean): Promise<LoadProgress> {
  const engine = statsEngineOf({ ...env, ROLE: 'all' }, database);
  if (!engine) throw new UsageError('Statistics are off (STATS=off): nothing to load.');
  const logger = createLogger({ ...env, LOG_LEVEL: 'warn' });
  const store = await StatsStore.open(engine, database.db, logger).catch((error: unknown) => {
    throw statsStartupError(error, engine);
  });
  try {
    return await store.load((progress) => {
      if (!json) process.stderr.write(`\r${progress.events} events of ${progress.merchants} merchants`);
    });
  } finally {
    if (!json) process.stderr.write('\n');
    await store.close();
  }
}

run(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    if (
      error instanceof AppError ||
      error instanceof EnvError ||
      error instanceof StoreLockedError ||
      error instanceof StartupError
    ) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`partner: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
