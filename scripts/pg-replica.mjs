// A PostgreSQL primary and a streaming replica of it on loopback (packages/server/src/testing/pg-replica.mjs),
// for running reads from a replica by hand and for CI (docs/decisions/replica-reads.md):
//   node scripts/pg-replica.mjs start   # prints DATABASE_URL and DATABASE_READ_URL, and the startup time
//   node scripts/pg-replica.mjs status  # each server's state and the replica's replay position
//   node scripts/pg-replica.mjs stop    # stops both and removes their directories
// Ports: PG_REPLICA_PRIMARY_PORT (5543) and PG_REPLICA_PORT (5544); directories in PG_REPLICA_DIR
// (default <tmp>/partner-tags-pg-replica). Never the machine's 5432.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  PG_BIN,
  pgReplicaAvailable,
  startPgReplica,
  stopPgReplicaDir,
} from '../packages/server/src/testing/pg-replica.mjs';

const dir = process.env.PG_REPLICA_DIR ?? path.join(tmpdir(), 'partner-tags-pg-replica');
const stateFile = `${dir}.json`;
const primaryPort = Number(process.env.PG_REPLICA_PRIMARY_PORT ?? 5543);
const replicaPort = Number(process.env.PG_REPLICA_PORT ?? 5544);
const action = process.argv[2];
const readState = () => (existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : undefined);

async function status(state) {
  const require = createRequire(new URL('../packages/server/package.json', import.meta.url));
  const postgres = require('postgres');
  for (const [name, url] of [
    ['primary', state.primaryUrl],
    ['replica', state.replicaUrl],
  ]) {
    const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      const [row] = await sql`select pg_is_in_recovery() as standby,
        coalesce(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text as lsn`;
      console.log(`${name} ${url} up, ${row.standby ? 'standby' : 'primary'}, WAL at ${row.lsn}`);
    } catch (error) {
      console.log(`${name} ${url} down (${error.code ?? error.message})`);
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
}

if (action === 'start') {
  if (!pgReplicaAvailable()) {
    console.error(
      `initdb, pg_ctl or pg_basebackup missing in ${PG_BIN} (Debian: apt-get install postgresql-15; PG_BIN to change)`,
    );
    process.exit(3);
  }
  if (readState()) {
    console.error(`a pair already runs from ${dir}: node scripts/pg-replica.mjs stop first`);
    process.exit(1);
  }
  const pair = await startPgReplica({ dir, primaryPort, replicaPort, detached: true });
  const state = { dir, primaryUrl: pair.primaryUrl(), replicaUrl: pair.replicaUrl() };
  writeFileSync(stateFile, JSON.stringify(state, null, 2));
  console.log(`primary and streaming replica up in ${pair.startupMs} ms; data in ${dir}`);
  console.log(`DATABASE_URL=${state.primaryUrl} DATABASE_READ_URL=${state.replicaUrl}`);
} else if (action === 'status') {
  const state = readState();
  if (!state) {
    console.log('no pair started from', dir);
    process.exit(1);
  }
  await status(state);
} else if (action === 'stop') {
  const state = readState();
  const started = performance.now();
  stopPgReplicaDir(dir);
  rmSync(stateFile, { force: true });
  console.log(
    state ? `stopped in ${Math.round(performance.now() - started)} ms; removed ${dir}` : `nothing started from ${dir}`,
  );
} else {
  console.error('usage: node scripts/pg-replica.mjs start|status|stop');
  process.exit(2);
}
