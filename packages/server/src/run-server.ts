import { openDatabaseFromEnv, startApp } from './app.js';
import { StoreLockedError } from './db/lock.js';
import { onboardDemoPartnerIfEmpty, restartBanner } from './features/partners/demo-partner.js';
import { EnvError, parseEnv } from './kernel/env.js';
import { createLogger } from './kernel/logger.js';
import { settingsLine } from './kernel/settings-summary.js';
import { StartupError } from './kernel/startup-error.js';
import type { TestKnobs } from './kernel/test-knobs.js';

async function serve(knobs: Partial<TestKnobs> | undefined): Promise<void> {
  const env = parseEnv();
  const logger = createLogger(env);
  // One line of what this start changes from docs/settings.md's defaults (secrets redacted).
  logger.info(settingsLine());
  if (knobs) logger.info({ knobs }, 'test knobs (src/testing/server-entry.ts)');
  const database = await openDatabaseFromEnv(env);
  const demo =
    env.DATABASE_URL || env.NODE_ENV === 'production' ? null : await onboardDemoPartnerIfEmpty(database.db, env);
  const app = await startApp(env, { logger, database, knobs });
  // Before the line that says it listens: a SIGTERM sent on reading it must find its handler (no
  // handler yet, the default action ends the process without draining).
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    await app.close();
    await database.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  logger.info({ url: app.url, database: database.driver }, 'Partner Tags API listening');
  if (demo) process.stdout.write(demo.banner(app.url));
  else {
    const embedded = database.driver === 'pglite';
    process.stdout.write(
      restartBanner(app.url, embedded ? `embedded database in ${env.DATA_DIR}` : 'PostgreSQL', embedded),
    );
  }
}

/**
 * The server process: parses the environment, starts the app, stops it on SIGTERM/SIGINT. main.ts
 * runs it as it is; src/testing/server-entry.ts with a test's knobs.
 */
export function runServer(knobs?: Partial<TestKnobs>): void {
  // A start that fails says so in one line naming the setting to fix (startup-error.ts), exit code 1;
  // the stack only with LOG_LEVEL=debug (or trace).
  serve(knobs).catch((error: unknown) => {
    const debug = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
    const known = error instanceof EnvError || error instanceof StoreLockedError || error instanceof StartupError;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${known ? message : `Failed to start: ${message}`}\n`);
    if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  });
}
