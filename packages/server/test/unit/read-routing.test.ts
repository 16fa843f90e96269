import { describe, expect, it } from 'vitest';
import { lagSeconds, lsnBytes } from '../../src/db/read-routing.js';
import { EnvError, parseEnv } from '../../src/kernel/env.js';

// The replica's lag from sampled WAL positions (db/read-routing.ts); the replica itself in
// test/system/replica.test.ts.
describe('replica lag', () => {
  it('reads WAL positions as bytes', () => {
    expect(lsnBytes('0/0')).toBe(0n);
    expect(lsnBytes('0/3000148')).toBe(0x3000148n);
    expect(lsnBytes('1/0') - lsnBytes('0/FFFFFFFF')).toBe(1n);
  });

  const samples = [
    { at: 10_000, lsn: 100n },
    { at: 11_000, lsn: 200n },
    { at: 12_000, lsn: 300n },
  ];

  it('is 0 once the newest sampled position is replayed', () => {
    expect(lagSeconds(12_010, samples, 300n, 3_600)).toBe(0);
    expect(lagSeconds(12_010, samples, 350n, null)).toBe(0);
  });

  it('after an idle spell: the newest replayed sample bounds it, not the old commit', () => {
    // The last commit replayed an hour ago; the replica has replayed the sample of 11 000.
    expect(lagSeconds(12_010, samples, 250n, 3_600)).toBeCloseTo(1.01, 5);
  });

  it('under steady writes: the last replayed commit is younger than any sample', () => {
    expect(lagSeconds(12_010, samples, 250n, 0.004)).toBeCloseTo(0.004, 5);
  });

  it('is unbounded when nothing sampled was replayed and no commit says', () => {
    expect(lagSeconds(12_010, samples, 50n, null)).toBe(Number.POSITIVE_INFINITY);
    expect(lagSeconds(12_010, samples, 50n, 7)).toBe(7);
  });
});

describe('DATABASE_READ_URL', () => {
  it('needs DATABASE_URL: the embedded database has no replica', () => {
    expect(() => parseEnv({ DATABASE_READ_URL: 'postgres://r@127.0.0.1:5544/app' })).toThrow(EnvError);
    expect(() => parseEnv({ DATABASE_READ_URL: 'postgres://r@127.0.0.1:5544/app' })).toThrow(/needs DATABASE_URL/);
  });

  it('parses with a primary, the bound and the interval as durations', () => {
    const env = parseEnv({
      DATABASE_URL: 'postgres://p@127.0.0.1:5543/app',
      DATABASE_READ_URL: 'postgres://r@127.0.0.1:5544/app',
      DB_READ_MAX_LAG: '2s',
    });
    expect(env.DB_READ_MAX_LAG).toBe(2_000);
    expect(env.DB_READ_CHECK_INTERVAL).toBe(1_000);
    expect(() => parseEnv({ DATABASE_READ_URL: 'mysql://x' })).toThrow(/postgres:\/\//);
  });
});
