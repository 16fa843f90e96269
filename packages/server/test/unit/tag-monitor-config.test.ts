import { describe, expect, it } from 'vitest';
import { expectedRecordOf, newTargetLabel } from '../../src/features/tags/dns-check.js';
import { recheckDelay, tagStateConfigFromEnv } from '../../src/features/tags/lifecycle/tag-state.js';
import { parseEnv } from '../../src/kernel/env.js';

describe('tag monitor configuration', () => {
  it('defaults to about 1m, 5m, 15m, 1h, 6h, then daily for 7 days; health checks daily; on', () => {
    const env = parseEnv({});
    expect(env.TAG_RECHECK_SCHEDULE).toEqual([60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000]);
    expect(env.TAG_RECHECK_WINDOW).toBe(7 * 86_400_000);
    expect(env.TAG_HEALTH_INTERVAL).toBe(86_400_000);
    expect(env.TAG_MONITOR).toBe('on');
  });

  it('reads comma-separated durations; the last interval repeats', () => {
    const { schedule } = tagStateConfigFromEnv(
      parseEnv({ TAG_RECHECK_SCHEDULE: '1s, 2s,4s', TAG_HEALTH_INTERVAL: '2s' }),
    );
    expect(schedule.recheck).toEqual([1000, 2000, 4000]);
    expect(schedule.healthIntervalMs).toBe(2000);
    expect([0, 1, 2, 3, 10].map((attempt) => recheckDelay(schedule, attempt))).toEqual([1000, 2000, 4000, 4000, 4000]);
  });

  it.each([
    ['TAG_RECHECK_SCHEDULE', 'soon'],
    ['TAG_RECHECK_SCHEDULE', '1s,,x'],
    ['TAG_RECHECK_SCHEDULE', '10ms'],
    ['TAG_HEALTH_INTERVAL', 'daily'],
    ['TAG_RECHECK_WINDOW', '0'],
    ['TAG_MONITOR', 'maybe'],
  ])('refuses %s=%s at start, naming it', (name, value) => {
    expect(() => parseEnv({ [name]: value })).toThrow(name);
  });
});

describe('per-tag CNAME targets', () => {
  it('a new tag points at its own label under the target host; an older tag at the host itself', () => {
    const label = newTargetLabel();
    expect(label).toMatch(/^[a-z0-9]{12}$/);
    expect(newTargetLabel()).not.toBe(label);
    const tag = { recordName: 'edge-abc123', domain: 'shop.com' };
    expect(expectedRecordOf({ ...tag, targetLabel: label }, 'tags.example')).toEqual({
      type: 'CNAME',
      name: 'edge-abc123.shop.com',
      value: `${label}.tags.example`,
    });
    expect(expectedRecordOf({ ...tag, targetLabel: null }, 'tags.example').value).toBe('tags.example');
  });
});
