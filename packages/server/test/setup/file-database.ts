// vitest setupFiles (integration and system projects): with TEST_DATABASE_URL, this test file gets
// its own database, a copy of the migrated template, and TEST_DATABASE_URL points at it for the
// file (servers it starts, processes it spawns, direct connections); dropped when the file ends.
import { afterAll } from 'vitest';
import { createFileDatabase } from '../../src/testing/test-database.js';

const url = process.env.TEST_DATABASE_URL;
if (url) {
  const database = await createFileDatabase(url);
  process.env.TEST_DATABASE_URL = database.url;
  afterAll(async () => {
    process.env.TEST_DATABASE_URL = url;
    await database.drop();
  });
}
