import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createPollLoop } from '../../src/jobs/poll-loop.js';

const logged: Array<{ level: number; msg: string }> = [];
const logger = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });

const until = async (condition: () => boolean, timeoutMs = 5000) => {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('createPollLoop', () => {
  it('runs at start, again after the interval, and at once on wake()', async () => {
    let runs = 0;
    const loop = createPollLoop({ name: 't1', intervalMs: 60_000, logger, run: async () => void runs++ });
    loop.start();
    await until(() => runs === 1);
    loop.wake();
    await until(() => runs === 2);
    await loop.stop();
    expect(loop.running).toBe(false);
    loop.wake();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(runs).toBe(2);
  });

  it('runs again without a pause while a run reports more work', async () => {
    let runs = 0;
    const loop = createPollLoop({ name: 't2', intervalMs: 60_000, logger, run: async () => ++runs < 5 });
    loop.start();
    await until(() => runs === 5);
    await loop.stop();
    expect(runs).toBe(5);
  });

  it('backs off while idle, up to maxIdleIntervalMs, and wake() resets the pause', async () => {
    const starts: number[] = [];
    const loop = createPollLoop({
      name: 't-idle',
      intervalMs: 10,
      maxIdleIntervalMs: 80,
      jitter: 0,
      logger,
      run: async () => void starts.push(Date.now()),
    });
    loop.start();
    await until(() => starts.length >= 6);
    const gaps = starts.slice(1, 6).map((at, i) => at - (starts[i] ?? at));
    // Pauses 10, 20, 40, 80, 80 ms: each at least the doubled interval, capped.
    expect(gaps[0]).toBeGreaterThanOrEqual(9);
    expect(gaps[2]).toBeGreaterThanOrEqual(39);
    expect(gaps[3]).toBeGreaterThanOrEqual(79);
    expect(gaps[4]).toBeLessThan((gaps[3] ?? 0) + 60);
    const before = starts.length;
    loop.wake();
    await until(() => starts.length === before + 1);
    await until(() => starts.length === before + 2);
    // After a wake the next idle pause is the base interval again, not 80 ms.
    expect((starts[before + 1] ?? 0) - (starts[before] ?? 0)).toBeLessThan(75);
    await loop.stop();
  });

  it('wake(withinMs) cuts a long idle pause to withinMs and keeps a shorter one', async () => {
    const starts: number[] = [];
    const loop = createPollLoop({
      name: 't-within',
      intervalMs: 60_000,
      jitter: 0,
      logger,
      run: async () => void starts.push(Date.now()),
    });
    loop.start();
    await until(() => starts.length === 1);
    // The pause is 60 s: a wake within 50 ms runs after about 50 ms, not at once and not in 60 s.
    const woken = Date.now();
    loop.wake(50);
    await until(() => starts.length === 2, 2_000);
    expect((starts[1] ?? 0) - woken).toBeGreaterThanOrEqual(45);
    // Waking within 10 s now that the next run is due sooner (after another wake within 50 ms) keeps it.
    loop.wake(50);
    loop.wake(10_000);
    await until(() => starts.length === 3, 2_000);
    await loop.stop();
  });

  it('a wake(withinMs) during a run shortens the pause after it to withinMs', async () => {
    let release: (() => void) | undefined;
    const starts: number[] = [];
    const loop = createPollLoop({
      name: 't-within-run',
      intervalMs: 60_000,
      jitter: 0,
      logger,
      run: async () => {
        starts.push(Date.now());
        if (starts.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
    });
    loop.start();
    await until(() => release !== undefined);
    loop.wake(30);
    const ended = Date.now();
    release?.();
    await until(() => starts.length === 2, 2_000);
    expect((starts[1] ?? 0) - ended).toBeGreaterThanOrEqual(25);
    await loop.stop();
  });

  it('logs a failing run and goes on', async () => {
    let runs = 0;
    const loop = createPollLoop({
      name: 't3',
      intervalMs: 1,
      jitter: 0,
      logger,
      run: async () => {
        runs++;
        throw new Error('boom');
      },
    });
    loop.start();
    await until(() => runs >= 3);
    await loop.stop();
    expect(logged.some((entry) => entry.msg === 'background run failed')).toBe(true);
  });

  it('aborts a run at its deadline and goes on', async () => {
    let runs = 0;
    let aborted = 0;
    const loop = createPollLoop({
      name: 't4',
      intervalMs: 1,
      runTimeoutMs: 20,
      logger,
      run: (signal) =>
        new Promise<void>(() => {
          runs++;
          signal.addEventListener('abort', () => aborted++);
        }),
    });
    loop.start();
    await until(() => runs >= 2);
    await loop.stop();
    expect(aborted).toBeGreaterThanOrEqual(1);
    expect(logged.some((entry) => entry.msg === 'background run reached its deadline')).toBe(true);
  });

  it('stop() aborts the current run and waits for it to end', async () => {
    let finished = false;
    const loop = createPollLoop({
      name: 't5',
      intervalMs: 60_000,
      logger,
      run: (signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () =>
            setTimeout(() => {
              finished = true;
              resolve();
            }, 30),
          );
        }),
    });
    loop.start();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await loop.stop();
    expect(finished).toBe(true);
  });

  it('a wake() during a run starts another run right after it', async () => {
    let runs = 0;
    let release: () => void = () => {};
    const loop = createPollLoop({
      name: 't6',
      intervalMs: 60_000,
      logger,
      run: () =>
        new Promise<void>((resolve) => {
          runs++;
          release = resolve;
        }),
    });
    loop.start();
    await until(() => runs === 1);
    loop.wake();
    release();
    await until(() => runs === 2);
    release();
    await loop.stop();
  });
});
