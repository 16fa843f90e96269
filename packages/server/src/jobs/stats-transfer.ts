import type { StatsStore } from '../features/stats/store.js';
import type { Logger } from '../kernel/logger.js';
import type { Part } from '../runtime/lifecycle.js';
import { createPollLoop } from './poll-loop.js';

/** The statistics' store as a part. */
export function statsStorePart(store: StatsStore, logger: Logger): Part {
  const log = logger.child({ job: 'stats-transfer' });
  const recovery = createPollLoop({
    name: 'stats-recovery',
    intervalMs: 5_000,
    runTimeoutMs: 120_000,
    logger,
    run: async (signal) => (await store.recover(100, signal)) === 100,
  });
  const loading = new AbortController();
  let load: Promise<void> | undefined;
  const loadOnce = async () => {
    const progress = await store.loadStored(loading.signal);
    if (progress && progress.events > 0) log.info(progress, 'statistics: stored events loaded');
  };
  return {
    name: 'stats-store',
    start() {
      recovery.start();
      load = loadOnce().catch((error: unknown) => {
        log.warn({ err: error }, 'statistics: loading stored events stopped; the next start resumes it');
      });
    },
    stop: {
      async release() {
        loading.abort();
        await Promise.all([load, recovery.stop()]);
        await store.close();
      },
    },
  };
}
