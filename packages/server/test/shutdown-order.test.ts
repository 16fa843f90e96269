// The shutdown order of a started app with every part on (runtime/lifecycle.ts): read from the app's
// parts list, so a reordering shows here as a test change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STOP_PHASES, shutdownPlan } from '../src/runtime/lifecycle.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { deleteLogStream, NATS_URL, natsAnswers, uniqueLogPrefix } from './helpers/event-log.js';

const available = await natsAnswers();
if (!available) console.warn(`shutdown-order test skipped: NATS does not answer at ${NATS_URL}`);
const prefix = uniqueLogPrefix();
let server: TestServer | undefined;

afterAll(async () => {
  if (available) await deleteLogStream(prefix);
});
afterAll(async () => {
  await server?.close();
});

describe.skipIf(!available)('shutdown order', () => {
  // Started in a hook (hookTimeout): an app with every part on takes most of the test time to start
  // on a loaded machine, and the test itself only reads the parts and closes.
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        EVENT_LOG_URL: NATS_URL,
        EVENT_LOG_PREFIX: prefix,
        TAG_MONITOR: 'on',
        WEBHOOK_DELIVERY: 'on',
        EVENT_RETENTION: 'on',
        STATS_NOTICES: 'on',
        COLLECTOR_PORT: '0',
        METRICS_PORT: '0',
      },
    });
  });

  it('starts the parts in list order and stops them in reverse, phase by phase', async () => {
    const { app } = server!;
    expect(app.parts.map((part) => part.name)).toEqual([
      'database',
      // Without DATABASE_READ_URL it does nothing (test/system/replica.test.ts runs it with a replica).
      'read-replica',
      // Stopped after every part that hands it events, before the database.
      'stats-store',
      'collector-host-watch',
      'deleted-tags-watch',
      'key-watch',
      'rate-limits',
      'tag-monitor',
      'merchant-purge',
      'visitor-erasure',
      'visitor-salt',
      'event-retention',
      'event-partitions',
      'day-count-compaction',
      'event-log',
      'webhook-retention',
      'webhook-worker',
      'stats-digests',
      'stats-spikes',
      'log-writers',
      'stream-hub',
      'event-queue',
      'drain-state',
      'http-listener',
      'collector-listener',
      'metrics-listener',
    ]);
    const expected = [
      {
        phase: 'stop-accepting',
        parts: ['metrics-listener', 'collector-listener', 'http-listener', 'drain-state', 'event-queue', 'tag-monitor'],
      },
      { phase: 'close-streams', parts: ['stream-hub'] },
      { phase: 'drain', parts: ['metrics-listener', 'collector-listener', 'http-listener'] },
      { phase: 'flush', parts: ['event-queue'] },
      {
        phase: 'release',
        // The shared test database is the test's, not the app's: the app does not close it.
        parts: [
          'log-writers',
          'stats-spikes',
          'stats-digests',
          'webhook-worker',
          'webhook-retention',
          'event-log',
          'day-count-compaction',
          'event-partitions',
          'event-retention',
          'visitor-salt',
          'visitor-erasure',
          'merchant-purge',
          'tag-monitor',
          'rate-limits',
          'key-watch',
          'deleted-tags-watch',
          'collector-host-watch',
          'stats-store',
        ],
      },
    ];
    expect(shutdownPlan(app.parts)).toEqual(expected);

    // What close() runs, recorded by wrapping every hook.
    const ran: string[] = [];
    // Whether each listener still listened when the drain state began (its answers make clients
    // reconnect: every listener must be closed by then).
    let listeningAtDrain: Array<boolean | undefined> = [];
    for (const part of app.parts) {
      for (const phase of STOP_PHASES) {
        const hook = part.stop[phase];
        if (!hook) continue;
        part.stop[phase] = (context) => {
          ran.push(`${phase} ${part.name}`);
          if (part.name === 'drain-state')
            listeningAtDrain = [app.server, app.collectorServer, app.metricsServer].map((server) => server?.listening);
          return hook(context);
        };
      }
    }
    await app.close(2_000);
    expect(listeningAtDrain).toEqual([false, false, false]);
    expect(ran).toEqual(expected.flatMap(({ phase, parts }) => parts.map((name) => `${phase} ${name}`)));
    expect(app.deps.streams.isClosed).toBe(true);
    expect(app.deps.eventLog?.isConnected).toBe(false);
  });
});
