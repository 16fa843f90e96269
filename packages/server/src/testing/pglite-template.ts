import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type DatabaseHandle, MIGRATIONS_DIR, openDatabase } from '../db/client.js';

/** A fingerprint of the migrations: a new or changed migration makes a new template. */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const name of fs.readdirSync(MIGRATIONS_DIR, { recursive: true }).map(String).sort()) {
    const file = path.join(MIGRATIONS_DIR, name);
    if (!fs.statSync(file).isFile()) continue;
    hash.update(name).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

let template: Promise<Blob> | undefined;

/** A dump of an in-memory PGlite with every migration applied, made once and kept in the OS temp directory. */
export function pgliteTemplate(): Promise<Blob> {
  template ??= (async () => {
    const file = path.join(os.tmpdir(), `partner-tags-pglite-${migrationsHash()}.tar`);
    if (fs.existsSync(file)) return new Blob([fs.readFileSync(file)]);
    const database = await openDatabase({ kind: 'pglite' });
    try {
      const client = (database.db as unknown as { $client: { dumpDataDir(c: 'none'): Promise<Blob> } }).$client;
      const dump = await client.dumpDataDir('none');
      const bytes = Buffer.from(await dump.arrayBuffer());
      // Written aside, then renamed: a concurrent worker never reads half a file.
      const partial = `${file}.${process.pid}.partial`;
      fs.writeFileSync(partial, bytes);
      fs.renameSync(partial, file);
      return new Blob([bytes]);
    } finally {
      await database.close();
    }
  })();
  return template;
}

/** An in-memory PGlite, migrated: a copy of the template. */
export async function openTestPglite(): Promise<DatabaseHandle> {
  return openDatabase({ kind: 'pglite', loadDataDir: await pgliteTemplate() });
}
