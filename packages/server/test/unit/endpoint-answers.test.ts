import { describe, expect, it } from 'vitest';
import { EndpointAnswers } from '../../src/jobs/endpoint-answers.js';

describe('EndpointAnswers: the in-flight limit an endpoint has earned', () => {
  it('one request until an answer, the full limit after it, one again after no answer', () => {
    const answers = new EndpointAnswers(4);
    expect(answers.limitOf('a')).toBe(1);
    expect(answers.note('a', true)).toBeNull();
    expect(answers.limitOf('a')).toBe(4);
    expect(answers.note('a', false)).toBe('silent');
    expect(answers.limitOf('a')).toBe(1);
    expect(answers.silentCount).toBe(1);
    expect(answers.silentIds()).toEqual(['a']);
    expect(answers.note('a', false)).toBeNull();
    expect(answers.silentCount).toBe(1);
    expect(answers.note('a', true)).toBe('answering');
    expect(answers.limitOf('a')).toBe(4);
    expect(answers.silentCount).toBe(0);
    expect(answers.silentIds()).toEqual([]);
  });

  it('an endpoint never heard from that does not answer is silent (no change to log)', () => {
    const answers = new EndpointAnswers(4);
    expect(answers.note('dead', false)).toBeNull();
    expect(answers.silentCount).toBe(1);
    expect(answers.limitOf('dead')).toBe(1);
  });

  it('remembers the last `capacity` endpoints heard from; a forgotten one starts again at one', () => {
    const answers = new EndpointAnswers(4, 3);
    answers.note('a', true);
    answers.note('b', false);
    answers.note('c', true);
    answers.note('a', true); // heard from again: the most recent now
    answers.note('d', true); // forgets b, the least recent
    expect(answers.silentCount).toBe(0);
    expect(answers.silentIds()).toEqual([]);
    expect(answers.limitOf('a')).toBe(4);
    expect(answers.limitOf('d')).toBe(4);
    answers.note('e', false); // forgets c
    expect(answers.limitOf('c')).toBe(1);
    expect(answers.silentIds()).toEqual(['e']);
    expect(answers.silentCount).toBe(1);
  });
});

describe('EndpointAnswers: an endpoint whose attempts time out backs off (issue 30 finding 5)', () => {
  it('is not claimed for base x 2^(n-1) after the n-th timeout in a row, up to the maximum; an answer ends it', () => {
    const answers = new EndpointAnswers(4, 10_000, 1_000, 5_000);
    const t0 = 1_000_000;
    expect(answers.noteTimedOut('dead', t0)).toBe(1_000);
    expect(answers.coolingIds(t0 + 999)).toEqual(['dead']);
    expect(answers.coolingIds(t0 + 1_000)).toEqual([]);
    expect(answers.noteTimedOut('dead', t0 + 2_000)).toBe(2_000);
    expect(answers.noteTimedOut('dead', t0 + 5_000)).toBe(4_000);
    expect(answers.noteTimedOut('dead', t0 + 10_000)).toBe(5_000);
    answers.note('dead', true);
    expect(answers.coolingIds(t0 + 10_001)).toEqual([]);
    expect(answers.noteTimedOut('dead', t0 + 20_000)).toBe(1_000);
  });
});
