import type { Logger } from '../kernel/logger.js';

export interface PollLoopOptions {
  /** Names the loop in logs. */
  name: string;
  /** Pause between runs (ms). */
  intervalMs: number;
  /** Idle backoff: after a run that found nothing, the next pause doubles, up to this. Unset: no backoff. */
  maxIdleIntervalMs?: number;
  /** Each pause is drawn from intervalMs x [1 - jitter, 1 + jitter] so instances drift apart. Default 0.2. */
  jitter?: number;
  /** Deadline of one run (ms): the signal aborts then and the loop goes on without waiting further. Default: 30 s. */
  runTimeoutMs?: number;
  logger: Logger;
  /** One round of work. Errors are logged, never thrown. */
  run: (signal: AbortSignal) => Promise<unknown>;
}

export interface PollLoop {
  /** Starts the loop; the first run begins at once. Calling it again does nothing. */
  start(): void;
  /** Runs within `withinMs`; a pause already shorter is kept. Ends an idle backoff. */
  wake(withinMs?: number): void;
  /** Stops: no new run starts, the current run's signal aborts, and this resolves when that run has ended. */
  stop(): Promise<void>;
  /** True between start() and stop(). */
  readonly running: boolean;
}

/** A background loop: run, pause (interval with jitter), run again; `wake()` cuts the pause short. */
export function createPollLoop(options: PollLoopOptions): PollLoop {
  const jitter = Math.min(Math.max(options.jitter ?? 0.2, 0), 1);
  const runTimeoutMs = options.runTimeoutMs ?? 30_000;
  const log = options.logger.child({ loop: options.name });

  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let dueAt = 0;
  let current: Promise<void> | undefined;
  let controller: AbortController | undefined;
  /** The soonest wake() asked for during the current run (ms after it), if any. */
  let wakeWithin: number | undefined;
  let idleRuns = 0;

  const pause = () => {
    const max = Math.max(options.maxIdleIntervalMs ?? options.intervalMs, options.intervalMs);
    const base = Math.min(options.intervalMs * 2 ** Math.min(Math.max(idleRuns - 1, 0), 30), max);
    return base * (1 - jitter + Math.random() * 2 * jitter);
  };

  const schedule = (delayMs: number) => {
    if (!running) return;
    clearTimeout(timer);
    dueAt = Date.now() + delayMs;
    timer = setTimeout(tick, delayMs);
    timer.unref?.();
  };

  async function runOnce(): Promise<boolean> {
    controller = new AbortController();
    const signal = controller.signal;
    let deadline: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      deadline = setTimeout(() => {
        controller?.abort(new Error(`${options.name}: run deadline of ${runTimeoutMs} ms reached`));
        resolve('timeout');
      }, runTimeoutMs);
    });
    try {
      const outcome = await Promise.race([options.run(signal), timedOut]);
      if (outcome === 'timeout') {
        log.warn({ runTimeoutMs }, 'background run reached its deadline');
        return false;
      }
      return outcome === true;
    } catch (error) {
      log.error({ err: error }, 'background run failed');
      return false;
    } finally {
      clearTimeout(deadline);
    }
  }

  function tick() {
    timer = undefined;
    if (!running || current) return;
    wakeWithin = undefined;
    current = runOnce().then((more) => {
      current = undefined;
      if (!running) return;
      const woken = wakeWithin;
      idleRuns = more || woken !== undefined ? 0 : idleRuns + 1;
      schedule(more ? 0 : Math.min(pause(), woken ?? Number.POSITIVE_INFINITY));
    });
  }

  return {
    start() {
      if (running) return;
      running = true;
      schedule(0);
    },
    wake(withinMs = 0) {
      if (!running) return;
      idleRuns = 0;
      if (current) wakeWithin = Math.min(wakeWithin ?? withinMs, withinMs);
      else if (timer === undefined || dueAt - Date.now() > withinMs) schedule(withinMs);
    },
    async stop() {
      if (!running) return current;
      running = false;
      clearTimeout(timer);
      timer = undefined;
      controller?.abort(new Error(`${options.name}: stopping`));
      await current;
    },
    get running() {
      return running;
    },
  };
}
