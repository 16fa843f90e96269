import { is, sql } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../src/db/client.js';
import { rowsOf } from '../src/db/read-rows.js';
import * as schema from '../src/db/schema/index.js';
import { openTestPglite } from '../src/testing/index.js';

// The migrations have been written by hand since 0006 (drizzle-kit's snapshots stop at 0005), and the
// drizzle schema (src/db/schema/) is what the code queries through. This holds the two together on the
// database the suite runs on (TEST_DATABASE_URL: PostgreSQL; else PGlite), freshly migrated: the same
// tables, the same columns, and the same indexes by name (a primary key's own index aside). An index
// declared in the schema and forgotten in a migration (or the reverse) fails here.
let database: DatabaseHandle;

beforeAll(async () => {
  const url = process.env.TEST_DATABASE_URL;
  database = url ? await openDatabase({ kind: 'postgres', url }) : await openTestPglite();
});
afterAll(() => database?.close());

type Shape = Record<string, { columns: string[]; indexes: string[] }>;

function declared(): Shape {
  const shape: Shape = {};
  for (const value of Object.values(schema) as unknown[]) {
    if (!is(value, PgTable)) continue;
    const config = getTableConfig(value);
    shape[config.name] = {
      columns: config.columns.map((column) => column.name).sort(),
      indexes: config.indexes.map((index) => index.config.name ?? '(unnamed)').sort(),
    };
  }
  return shape;
}

async function migrated(): Promise<Shape> {
  const columns = rowsOf<{ table_name: string; column_name: string }>(
    await database.db.execute(sql`
      select c.table_name, c.column_name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = 'public' and t.table_type = 'BASE TABLE'
        -- The partitions of a partitioned table (events, migration 0028) are its storage, not tables of the schema.
        and not exists (select 1 from pg_class k where k.oid = to_regclass(quote_ident(c.table_name)) and k.relispartition)
      order by c.column_name`),
  );
  const indexes = rowsOf<{ table_name: string; index_name: string }>(
    await database.db.execute(sql`
      select t.relname as table_name, i.relname as index_name
      from pg_index x
      join pg_class i on i.oid = x.indexrelid
      join pg_class t on t.oid = x.indrelid
      join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = 'public' and not x.indisprimary
      order by i.relname`),
  );
  const shape: Shape = {};
  for (const { table_name, column_name } of columns) {
    shape[table_name] ??= { columns: [], indexes: [] };
    shape[table_name].columns.push(column_name);
  }
  for (const { table_name, index_name } of indexes) shape[table_name]?.indexes.push(index_name);
  for (const table of Object.values(shape)) {
    table.columns.sort();
    table.indexes.sort();
  }
  return shape;
}

describe('the drizzle schema and the migrated database', () => {
  it('have the same tables, columns and indexes', async () => {
    const schemaShape = declared();
    expect(Object.keys(schemaShape).length).toBeGreaterThan(5);
    expect(await migrated()).toEqual(schemaShape);
  });
});
