// Plain JavaScript: a PostgreSQL 15 primary and a streaming replica of it on loopback, for the replica system test, CI
// and a developer. initdb into a temporary directory, the primary started there.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './net.mjs';

/** Where Debian installs the PostgreSQL 15 server programs (PG_BIN to change it). */
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

const asRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** True when initdb, pg_ctl and pg_basebackup are there (and, as root, the `postgres` user to run them). */
export function pgReplicaAvailable() {
  if (!['initdb', 'pg_ctl', 'pg_basebackup'].every((bin) => existsSync(path.join(PG_BIN, bin)))) return false;
  return !asRoot() || spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status === 0;
}

/** Runs a PostgreSQL program (as `postgres` when we are root) and returns its output; throws with it on failure. */
function run(bin, args, timeoutMs) {
  const [command, argv] = asRoot()
    ? ['runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args]]
    : [path.join(PG_BIN, bin), args];
  const result = spawnSync(command, argv, { encoding: 'utf8', timeout: timeoutMs });
  if (result.status !== 0) {
    const why = result.error ? String(result.error) : `exit ${result.status ?? result.signal}`;
    throw new Error(`${bin} ${args.join(' ')}: ${why}\n${result.stdout ?? ''}${result.stderr ?? ''}`);
  }
  return result.stdout;
}

/** A directory the `postgres` user owns (when we are root). */
function ownedDir(dir) {
  mkdirSync(dir, { recursive: true });
  if (!asRoot()) return;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
  chownSync(dir, uid, gid);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a server on its data directory and waits (pg_ctl -w, at most `timeoutMs`) until it accepts connections. */
function pgStart(dataDir, timeoutMs) {
  const seconds = String(Math.ceil(timeoutMs / 1000));
  run(
    'pg_ctl',
    ['-D', dataDir, '-l', path.join(dataDir, 'server.log'), '-w', '-t', seconds, 'start'],
    timeoutMs + 5_000,
  );
}

/** Stops a server: `immediate` is a crash (no checkpoint), `fast` a clean stop. A stopped one is left alone. */
function pgStop(dataDir, mode = 'fast') {
  if (!existsSync(path.join(dataDir, 'postmaster.pid'))) return;
  try {
    run('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '20', 'stop'], 25_000);
  } catch {
    // Already gone (a crashed server leaves its pid file behind).
  }
}

/**
 * Starts the primary and the replica and waits until the replica streams. `detached`: the servers outlive this
 * process; otherwise they are stopped and the directory removed when this process exits, however it exits.
 */
export async function startPgReplica(options = {}) {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const started = performance.now();
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'pg-replica-'));
  ownedDir(dir);
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  const primaryPort = options.primaryPort ?? (await freePort());
  const replicaPort = options.replicaPort ?? (await freePort());
  const url = (port, database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

  const stopBoth = () => {
    pgStop(replicaDir, 'immediate');
    pgStop(primaryDir, 'immediate');
  };
  const onExit = () => {
    stopBoth();
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  };
  if (!options.detached) process.once('exit', onExit);

  try {
    run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], timeoutMs);
    // A throw-away cluster: no fsync; sockets in its own directory (never /var/run/postgresql's).
    appendFileSync(
      path.join(primaryDir, 'postgresql.conf'),
      [
        '',
        "listen_addresses = '127.0.0.1'",
        `port = ${primaryPort}`,
        `unix_socket_directories = '${dir}'`,
        'wal_level = replica',
        'max_wal_senders = 5',
        'wal_keep_size = 256MB',
        'hot_standby = on',
        'fsync = off',
        'max_connections = 60',
        'shared_buffers = 32MB',
        // What each server ran, counted at once (the replica test reads it on both).
        "shared_preload_libraries = 'pg_stat_statements'",
        '',
      ].join('\n'),
    );
    appendFileSync(path.join(primaryDir, 'pg_hba.conf'), '\nhost replication all 127.0.0.1/32 trust\n');
    pgStart(primaryDir, timeoutMs);
    const base = ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir];
    run('pg_basebackup', [...base, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'], timeoutMs);
    // The copied postgresql.conf names the primary's port; a later line wins.
    appendFileSync(path.join(replicaDir, 'postgresql.conf'), `\nport = ${replicaPort}\nhot_standby = on\n`);
    pgStart(replicaDir, timeoutMs);
    await waitStreaming(url(primaryPort), timeoutMs);
  } catch (error) {
    stopBoth();
    if (!options.detached) process.off('exit', onExit);
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    dir,
    primaryPort,
    replicaPort,
    /** Milliseconds from the call to a streaming replica. */
    startupMs: Math.round(performance.now() - started),
    primaryUrl: (database) => url(primaryPort, database),
    replicaUrl: (database) => url(replicaPort, database),
    /** Stops the replica (`immediate`: as if killed). */
    stopReplica: (mode = 'immediate') => pgStop(replicaDir, mode),
    /** Starts the stopped replica again; it catches up from the primary. */
    startReplica: () => pgStart(replicaDir, timeoutMs),
    /** Stops both servers and removes the directory (unless it was given). */
    async stop() {
      stopBoth();
      if (!options.detached) process.off('exit', onExit);
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the primary has a streaming WAL sender (the replica connected and caught up once). */
async function waitStreaming(primaryUrl, timeoutMs) {
  const { default: postgres } = await import('postgres');
  const sql = postgres(primaryUrl, { max: 1, connect_timeout: 5, onnotice: () => {} });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const [row] = await sql`select count(*)::int as n from pg_stat_replication where state = 'streaming'`;
      if (row.n > 0) return;
      if (Date.now() > deadline) throw new Error(`the replica did not stream within ${timeoutMs} ms`);
      await sleep(50);
    }
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/** Stops the servers of a detached pair started in `dir` and removes it (the developer script's stop). */
export function stopPgReplicaDir(dir) {
  pgStop(path.join(dir, 'replica'), 'fast');
  pgStop(path.join(dir, 'primary'), 'fast');
  rmSync(dir, { recursive: true, force: true });
}
