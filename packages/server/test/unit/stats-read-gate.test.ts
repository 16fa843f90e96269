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
  it('refuses a key its third read in flight with 429, and takes it again once one ended', async () => {
    const gate = new ReadGate({ perPrincipal: 2, total: 10 });
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
