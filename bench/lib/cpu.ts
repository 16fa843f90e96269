import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type postgres from 'postgres';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/**
 * CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat; null where there
 * is no /proc (the figure is then left out of the report).
 */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? ((utime + stime) * 1000) / USER_HZ : null;
  } catch {
    return null;
  }
}

/** CPU time (ms) used so far by every process whose command name is `name` (for example `postgres`). */
export function commandCpuMs(name: string): number | null {
  let total = 0;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (command !== name) continue;
      total += processCpuMs(Number(entry)) ?? 0;
    }
    return total;
  } catch {
    return null;
  }
}

/** µs of CPU per request between two readings (ms) over `requests` requests; null when a reading is missing. */
export function cpuPerRequest(before: number | null, after: number | null, requests: number): number | null {
  return before === null || after === null || requests === 0 ? null : ((after - before) * 1000) / requests;
}

/** Local ports of the TCP connections process `pid` holds to `remotePort`, from /proc (Linux); null elsewhere. */
function connectionPortsOf(pid: number, remotePort: number): number[] | null {
  try {
    const inodes = new Set<string>();
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const match = /^socket:\[(\d+)\]$/.exec(target);
        if (match?.[1]) inodes.add(match[1]);
      } catch {
        // closed meanwhile
      }
    }
    const ports: number[] = [];
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      let text: string;
      try {
        text = readFileSync(table, 'utf8');
      } catch {
        continue;
      }
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
      for (const line of text.split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        const local = fields[1];
        const remote = fields[2];
        const inode = fields[9];
        if (!local || !remote || !inode || !inodes.has(inode)) continue;
        if (Number.parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16) !== remotePort) continue;
        ports.push(Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16));
      }
    }
    return ports;
  } catch {
    return null;
  }
}

/**
 * CPU time (ms) so far of each PostgreSQL backend serving process `pid` (its connections matched to
 * `pg_stat_activity.client_port`): that server's share of the database's work, without autovacuum,
 * the checkpointer or other clients' backends. Null without /proc.
 */
export async function backendsCpuMs(
  sql: postgres.Sql,
  pid: number | undefined,
  port = 5432,
): Promise<Map<number, number> | null> {
  if (pid === undefined) return null;
  const ports = connectionPortsOf(pid, port);
  if (ports === null) return null;
  if (ports.length === 0) return new Map();
  const rows = await sql<{ pid: number }[]>`select pid from pg_stat_activity where client_port = any(${ports})`;
  const cpu = new Map<number, number>();
  for (const row of rows) {
    const ms = processCpuMs(row.pid);
    if (ms !== null) cpu.set(row.pid, ms);
  }
  return cpu;
}

/** CPU (ms) the backends used between two readings: a backend first seen in the second counts from 0. */
export function backendsCpuDelta(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (before === null || after === null) return null;
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}
