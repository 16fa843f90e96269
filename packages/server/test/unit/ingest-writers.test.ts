import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { ingestWriters } from '../../src/compose.js';

describe('INGEST_WRITERS', () => {
  it('is taken as set', () => {
    expect(ingestWriters({ INGEST_WRITERS: 3, DB_POOL_MAX: 2 })).toBe(3);
  });

  it('defaults to one per core, at most half the pool, at least one', () => {
    const cores = os.availableParallelism();
    expect(ingestWriters({ INGEST_WRITERS: undefined, DB_POOL_MAX: 1000 })).toBe(cores);
    expect(ingestWriters({ INGEST_WRITERS: undefined, DB_POOL_MAX: 2 })).toBe(1);
    expect(ingestWriters({ INGEST_WRITERS: undefined, DB_POOL_MAX: 1 })).toBe(1);
    expect(ingestWriters({ INGEST_WRITERS: undefined, DB_POOL_MAX: 2 * cores + 2 })).toBe(cores);
  });
});
