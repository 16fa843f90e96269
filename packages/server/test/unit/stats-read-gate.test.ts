import { describe, expect, it } from 'vitest';
import { ReadGate } from '../../src/features/stats/gate.js';

const later = () => {
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { done, release };
};

describe('the statistics read gate', () => {
  it("lines a key's reads past its two up in its own line, refuses past that with 429", async () => {
    const gate = new ReadGate({ perPrincipal: 2, perPrincipalWaiting: 1, total: 10 });
    const order: string[] = [];
    const a = later();
    const b = later();
    const first = gate.run('key:1', () => a.done.then(() => order.push('first')));
    const second = gate.run('key:1', () => b.done.then(() => order.push('second')));
    const third = gate.run('key:1', async () => order.push('third'));
    await expect(gate.run('key:1', async () => 'fourth')).rejects.toMatchObject({
      reason: 'RATE_LIMITED',
      headers: { 'retry-after': '1' },
    });
    // Another key is not held up by the first one's line.
    expect(await gate.run('key:2', async () => 'other')).toBe('other');
    // The third runs once one of the two ended, never beside both.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual([]);
    b.release();
    await Promise.all([second, third]);
    expect(order).toEqual(['second', 'third']);
    a.release();
    await first;
    expect(await gate.run('key:1', async () => 'again')).toBe('again');
  });

  it('refuses a key its third read in flight with 429 when it may wait for none', async () => {
    const gate = new ReadGate({ perPrincipal: 2, perPrincipalWaiting: 0, total: 10 });
    const a = later();
    const b = later();
    const first = gate.run('key:1', () => a.done);
    const second = gate.run('key:1', () => b.done);
    await expect(gate.run('key:1', async () => 'third')).rejects.toMatchObject({
      reason: 'RATE_LIMITED',
      headers: { 'retry-after': '1' },
    });
    // Another key is not held up by the first one's cap.
    expect(await gate.run('key:2', async () => 'other')).toBe('other');
    a.release();
    await first;
    expect(await gate.run('key:1', async () => 'again')).toBe('again');
    b.release();
    await second;
  });

  it('lines reads up past the process total, in order, and refuses them past the wait', async () => {
    const gate = new ReadGate({ perPrincipal: 10, total: 1, waiting: 1, waitMs: 50 });
    const a = later();
    const order: string[] = [];
    const first = gate.run('key:1', async () => {
      await a.done;
      order.push('first');
    });
    const second = gate.run('key:2', async () => {
      order.push('second');
    });
    // The line holds one: a third read is refused at once.
    await expect(gate.run('key:3', async () => 'x')).rejects.toMatchObject({ reason: 'STATS_UNAVAILABLE' });
    a.release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
    // Nobody releases the only slot within the wait: 503.
    const c = later();
    const held = gate.run('key:1', () => c.done);
    await expect(gate.run('key:2', async () => 'late')).rejects.toMatchObject({ reason: 'STATS_UNAVAILABLE' });
    c.release();
    await held;
  });

  it('frees the slot of a read that failed', async () => {
    const gate = new ReadGate({ perPrincipal: 1, total: 1 });
    await expect(gate.run('key:1', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run('key:1', async () => 'ok')).toBe('ok');
  });
});

it("a read that waited in its key's line past the wait answers 503 and leaves the line", async () => {
  const gate = new ReadGate({ perPrincipal: 1, perPrincipalWaiting: 4, total: 10, waitMs: 50 });
  const a = later();
  const held = gate.run('key:1', () => a.done);
  await expect(gate.run('key:1', async () => 'late')).rejects.toMatchObject({ reason: 'STATS_UNAVAILABLE' });
  a.release();
  await held;
  expect(await gate.run('key:1', async () => 'next')).toBe('next');
});
