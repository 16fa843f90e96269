import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/kernel/metrics.js';
import { Lifecycle, type Part, type StopPhase, shutdownPlan } from '../../src/runtime/lifecycle.js';

function setup(stopDeadlineMs?: number) {
  const logged: Array<{ level: number; msg: string; part?: string; phase?: string; err?: { message: string } }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const metrics = createMetrics({ processMetrics: false });
  return { logged, metrics, lifecycle: new Lifecycle({ logger, metrics, stopDeadlineMs }) };
}

/** A part that records its start and each of its phases' hooks into `trace`. */
function recorded(
  trace: string[],
  name: string,
  phases: StopPhase[],
  hook: (phase: StopPhase) => Promise<void> | void = () => {},
): Part {
  return {
    name,
    start: () => void trace.push(`start ${name}`),
    stop: Object.fromEntries(
      phases.map((phase) => [
        phase,
        () => {
          trace.push(`${phase} ${name}`);
          return hook(phase);
        },
      ]),
    ),
  };
}

describe('Lifecycle', () => {
  it('starts in list order and stops in reverse, phase by phase', async () => {
    const { lifecycle } = setup();
    const trace: string[] = [];
    lifecycle.add(
      recorded(trace, 'database', ['release']),
      recorded(trace, 'queue', ['stop-accepting', 'flush']),
      recorded(trace, 'writer', ['release']),
      recorded(trace, 'listener', ['stop-accepting', 'drain']),
    );
    await lifecycle.start();
    expect(trace.splice(0)).toEqual(['start database', 'start queue', 'start writer', 'start listener']);
    await lifecycle.stop(0);
    expect(trace).toEqual([
      'stop-accepting listener',
      'stop-accepting queue',
      'drain listener',
      'flush queue',
      'release writer',
      'release database',
    ]);
    expect(shutdownPlan(lifecycle.parts)).toEqual([
      { phase: 'stop-accepting', parts: ['listener', 'queue'] },
      { phase: 'drain', parts: ['listener'] },
      { phase: 'flush', parts: ['queue'] },
      { phase: 'release', parts: ['writer', 'database'] },
    ]);
  });

  it('runs synchronous hooks in the tick of stop(), and waits for an async hook before the next', async () => {
    const { lifecycle } = setup();
    const trace: string[] = [];
    let releaseFirst: () => void = () => {};
    lifecycle.add(
      recorded(trace, 'a', ['stop-accepting', 'release']),
      recorded(trace, 'b', ['stop-accepting', 'release'], (phase) =>
        phase === 'release' ? new Promise<void>((resolve) => (releaseFirst = resolve)) : undefined,
      ),
    );
    await lifecycle.start();
    trace.length = 0;
    const stopping = lifecycle.stop(0);
    expect(trace).toEqual(['stop-accepting b', 'stop-accepting a', 'release b']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(trace).toEqual(['stop-accepting b', 'stop-accepting a', 'release b']);
    releaseFirst();
    await stopping;
    expect(trace).toEqual(['stop-accepting b', 'stop-accepting a', 'release b', 'release a']);
    expect(lifecycle.stop(0)).toBe(stopping);
  });

  it('a stop that throws or rejects is logged and the others still stop', async () => {
    const { lifecycle, logged } = setup();
    const trace: string[] = [];
    lifecycle.add(
      recorded(trace, 'first', ['release']),
      recorded(trace, 'rejects', ['release'], () => Promise.reject(new Error('gone'))),
      recorded(trace, 'throws', ['stop-accepting'], () => {
        throw new Error('boom');
      }),
    );
    await lifecycle.start();
    trace.length = 0;
    await lifecycle.stop(0);
    expect(trace).toEqual(['stop-accepting throws', 'release rejects', 'release first']);
    const errors = logged.filter((line) => line.level === 50);
    expect(errors.map((line) => [line.part, line.phase, line.err?.message])).toEqual([
      ['throws', 'stop-accepting', 'boom'],
      ['rejects', 'release', 'gone'],
    ]);
  });

  it('a stop that hangs is given up on at its deadline (grace period plus the allowance)', async () => {
    const { lifecycle, logged } = setup(5_000);
    const trace: string[] = [];
    lifecycle.add(recorded(trace, 'database', ['release']), {
      ...recorded(trace, 'hangs', ['release'], () => new Promise<void>(() => {})),
      stopDeadlineMs: 50,
    });
    await lifecycle.start();
    trace.length = 0;
    const started = Date.now();
    await lifecycle.stop(100);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(2_000);
    expect(trace).toEqual(['release hangs', 'release database']);
    const within = logged.find((line) => line.part === 'hangs')?.err?.message.match(/did not end within (\d+) ms/);
    expect(Number(within?.[1])).toBeGreaterThan(100);
    expect(Number(within?.[1])).toBeLessThanOrEqual(150);
  });

  it('parts that wait in turn share one grace period: the second sees what the first left', async () => {
    const { lifecycle } = setup(5_000);
    const seen: number[] = [];
    const waits = (name: string): Part => ({
      name,
      stop: {
        'stop-accepting': async ({ remainingMs }) => {
          seen.push(remainingMs());
          await new Promise((resolve) => setTimeout(resolve, remainingMs()));
        },
      },
    });
    lifecycle.add(waits('first'), waits('second'));
    const started = Date.now();
    await lifecycle.stop(200);
    // Each waiting its own grace period, the two would take 400 ms.
    expect(seen[0]).toBeGreaterThan(150);
    expect(seen[1]).toBeLessThan(20);
    expect(Date.now() - started).toBeLessThan(380);
  });

  it('a failed start stops what had started, in reverse, and rethrows; unstarted parts are not stopped', async () => {
    const { lifecycle } = setup();
    const trace: string[] = [];
    const built: Part = { name: 'built', stop: { release: () => void trace.push('release built') } };
    lifecycle.add(built, recorded(trace, 'started', ['release']), {
      ...recorded(trace, 'fails', ['release']),
      start: () => Promise.reject(new Error('port in use')),
    });
    lifecycle.add(recorded(trace, 'never', ['release']));
    await expect(lifecycle.start()).rejects.toThrow('port in use');
    expect(trace).toEqual(['start started', 'release started', 'release built']);
  });

  it('registers each part metrics when added, and refuses a name twice', () => {
    const { lifecycle, metrics } = setup();
    lifecycle.add({
      name: 'queue',
      stop: {},
      metrics: (m) => void m.gaugeOf('partner_tags_test_depth', 'depth', () => 3),
    });
    expect(metrics.registry.getSingleMetric('partner_tags_test_depth')).toBeDefined();
    expect(() => lifecycle.add({ name: 'queue', stop: {} })).toThrow('queue added twice');
  });
});
