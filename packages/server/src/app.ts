import type http from 'node:http';
import { type ComposeOptions, composeApp } from './compose.js';
import type { AppDeps } from './context.js';
import type { DatabaseHandle } from './db/client.js';
import type { LogWriter } from './jobs/event-log-writer.js';
import type { WebhookDeliveryWorker } from './jobs/webhook-delivery.js';
import type { Env } from './kernel/env.js';
import type { Part } from './runtime/lifecycle.js';
import { drainStatePart, listenerPart, metricsOnlyListener, urlOf } from './transport/http/listener.js';
import { createDrainState, createRequestListener } from './transport/http/server.js';

export { openDatabaseFromEnv } from './compose.js';

export interface RunningApp {
  server: http.Server;
  /** The COLLECTOR_PORT listener, when set. */
  collectorServer?: http.Server | undefined;
  /** The METRICS_PORT listener, when set. */
  metricsServer?: http.Server | undefined;
  url: string;
  deps: AppDeps;
  database: DatabaseHandle;
  /** The log's writers running in this process (log mode, ROLE writer or all). */
  writers: LogWriter[];
  /** The webhook delivery worker (undefined with WEBHOOK_DELIVERY=off). */
  webhookWorker?: WebhookDeliveryWorker | undefined;
  /** The app's parts in start order; `close` stops them in reverse, phase by phase (runtime/lifecycle.ts). */
  parts: readonly Part[];
  /** Stops accepting, finishes in-flight requests (at most `graceMs`), closes the database if the app opened it. */
  close(graceMs?: number): Promise<void>;
}

export type StartOptions = ComposeOptions;

/** Builds the app from the env (compose.ts), adds its listeners and starts every part in order. */
export async function startApp(env: Env, options: StartOptions = {}): Promise<RunningApp> {
  const { deps, database, lifecycle, writers, webhookWorker } = await composeApp(env, options);
  const drain = createDrainState();
  const main = listenerPart('http-listener', env, { port: env.PORT, setting: 'PORT' }, () =>
    createRequestListener(deps, database, env.PUBLIC_BASE_URL, { drain }),
  );
  const url = () => urlOf(main.server, env.HOST);
  // COLLECTOR_PORT: a second listener that answers collector hosts only (the tag script, POST /e).
  const collector =
    env.COLLECTOR_PORT === undefined
      ? undefined
      : listenerPart('collector-listener', env, { port: env.COLLECTOR_PORT, setting: 'COLLECTOR_PORT' }, () =>
          createRequestListener(deps, database, url(), { collectorOnly: true, drain }),
        );
  // METRICS_PORT: GET /metrics without a token, nothing else (keep this port private).
  const metrics =
    env.METRICS_PORT === undefined
      ? undefined
      : listenerPart('metrics-listener', env, { port: env.METRICS_PORT, setting: 'METRICS_PORT' }, () =>
          metricsOnlyListener(deps),
        );
  // Listed last, so stopped first: every listener is closed before the drain state's first
  // `Connection: close` makes a client reconnect.
  lifecycle.add(drainStatePart(drain), main, ...(collector ? [collector] : []), ...(metrics ? [metrics] : []));
  await lifecycle.start();
  return {
    server: main.server,
    collectorServer: collector?.server,
    metricsServer: metrics?.server,
    url: url(),
    deps,
    database,
    writers,
    webhookWorker,
    parts: lifecycle.parts,
    close: (graceMs = 10_000) => lifecycle.stop(graceMs),
  };
}
