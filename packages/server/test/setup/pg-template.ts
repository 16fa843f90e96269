// vitest globalSetup: with TEST_DATABASE_URL, migrate the template database once per run (every
// test file copies it, test/setup/file-database.ts) and drop it when the run ends (a run never
// leaves databases behind on the server; the per-file copies are dropped by their files).
import { dropTemplateDatabase, ensureTemplateDatabase } from '../../src/testing/test-database.js';

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return undefined;
  const template = await ensureTemplateDatabase(url);
  return () => dropTemplateDatabase(url, template);
}
