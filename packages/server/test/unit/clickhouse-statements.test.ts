import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLICKHOUSE_MIGRATIONS_DIR, statementsOf } from '../../src/db/clickhouse/migrate.js';
import { amountWithScale } from '../../src/features/stats/points.js';

// The statistics' pure pieces: how a ClickHouse migration file is cut into statements (each safe
// to run twice, as two processes starting at once may), and revenue written at its own scale.
describe('ClickHouse migrations', () => {
  it('cuts a file at semicolons ending a line, comments dropped', () => {
    const text =
      "-- the table\nCREATE TABLE IF NOT EXISTS a (x String DEFAULT ';')\n  ENGINE = Memory;\n\n-- more\nSELECT 1;\n";
    expect(statementsOf(text)).toEqual([
      "CREATE TABLE IF NOT EXISTS a (x String DEFAULT ';')\n  ENGINE = Memory",
      'SELECT 1',
    ]);
  });

  it('has only statements that are safe twice', () => {
    const files = readdirSync(CLICKHOUSE_MIGRATIONS_DIR).filter((name) => name.endsWith('.sql'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const statements = statementsOf(readFileSync(path.join(CLICKHOUSE_MIGRATIONS_DIR, file), 'utf8'));
      expect(statements.length, file).toBeGreaterThan(0);
      for (const statement of statements) {
        expect([file, /\bIF NOT EXISTS\b/.test(statement)], statement.slice(0, 80)).toEqual([file, true]);
        expect(statement).not.toMatch(/^\s*--/m);
      }
    }
  });
});

describe('amountWithScale', () => {
  it('writes a sum with the scale of the amounts summed', () => {
    expect(amountWithScale('12.5', 2)).toBe('12.50');
    expect(amountWithScale('12.500000000000000000000000000000', 2)).toBe('12.50');
    expect(amountWithScale('12', 2)).toBe('12.00');
    expect(amountWithScale('92', 0)).toBe('92');
    expect(amountWithScale('92.000', 0)).toBe('92');
    expect(amountWithScale('-0.5', 3)).toBe('-0.500');
    expect(amountWithScale('0.0000001', 7)).toBe('0.0000001');
  });
});
