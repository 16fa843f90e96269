import { readdirSync, readFileSync } from 'node:fs';

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
