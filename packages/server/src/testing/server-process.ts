import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestKnobs } from '../kernel/test-knobs.js';

/** packages/server: the directory `src/main.ts` is started from. */
export const SERVER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServerProcess {
  /** The URL the process listens on (from its start-up line). */
  url: string;
  child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code once the process exited. */
  exited: Promise<number | null>;
  /** Sends `signal` (default SIGTERM) unless the process already exited. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

export interface SpawnServerOptions {
  /** Variables on top of the base (PORT 0 on 127.0.0.1, NODE_ENV production, LOG_LEVEL info). */
  env?: NodeJS.ProcessEnv;
  /** Start from the whole `process.env` instead of only PATH and HOME (default false). */
  inheritEnv?: boolean;
  /** Node flags before the entry (for example `--cpu-prof`). */
  nodeArgs?: string[];
  /** The entry point, relative to `cwd` (default `src/main.ts`). */
  script?: string;
  /** Default: packages/server. */
  cwd?: string;
  /** How long to wait for the start-up line (default 30 s). */
  timeoutMs?: number;
  /** Ready when `GET http://127.0.0.1:<port><readyPath>` answers 200 instead of on the start-up line; needs `port`. */
  ready?: { port: number; path: string };
  /** Keep only the last this many characters of the output (default: all). */
  outputLimit?: number;
  /**
   * Test knobs (kernel/test-knobs.ts): the process runs src/testing/server-entry.ts, src/main.ts
   * with these knobs (not with `script`).
   */
  knobs?: Partial<TestKnobs>;
}

/** `--import tsx` for a TypeScript entry, nothing for compiled JavaScript. */
const tsxFor = (script: string): string[] => (/\.m?js$/.test(script) ? [] : ['--import', 'tsx']);

const LISTENING = [/"url":"(http:\/\/[^"]+)"/, /API on (http:\/\/[^\s)]+)/];

/** Spawns `node --import tsx src/main.ts` and resolves once it listens, with the URL it printed. */
/** A directory of its own unless given: chDB (the statistics) opens one per process. */
function ownDataDir(options: SpawnServerOptions): string | undefined {
  if (options.env?.DATA_DIR || (options.inheritEnv && process.env.DATA_DIR)) return undefined;
  return mkdtempSync(path.join(os.tmpdir(), 'partner-tags-server-'));
}

/** The entry and its arguments: `script`, or the test entry with the knobs. */
function entryOf(options: SpawnServerOptions): string[] {
  if (!options.knobs) return [options.script ?? 'src/main.ts'];
  if (options.script) throw new Error('spawnServer: `knobs` run src/testing/server-entry.ts, not a `script`');
  return [path.join(SERVER_DIR, 'src/testing/server-entry.ts'), JSON.stringify(options.knobs)];
}

export async function spawnServer(options: SpawnServerOptions = {}): Promise<ServerProcess> {
  const entry = entryOf(options);
  const base: NodeJS.ProcessEnv = options.inheritEnv
    ? { ...process.env }
    : { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  const dataDir = ownDataDir(options);
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...tsxFor(entry[0] as string), ...entry], {
    cwd: options.cwd ?? SERVER_DIR,
    env: {
      ...base,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(options.ready?.port ?? 0),
      LOG_LEVEL: 'info',
      ...(dataDir ? { DATA_DIR: dataDir } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (options.outputLimit !== undefined && output.length > options.outputLimit)
      output = output.slice(-options.outputLimit);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  const kill = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      kill('SIGKILL');
      reject(new Error(`server did not start in time:\n${output}`));
    }, options.timeoutMs ?? 60_000);
    const check = () => {
      for (const pattern of LISTENING) {
        const match = pattern.exec(output);
        if (match?.[1]) {
          clearTimeout(timer);
          child.stdout?.off('data', check);
          child.stderr?.off('data', check);
          resolve(match[1]);
          return;
        }
      }
    };
    if (options.ready) {
      const readyUrl = `http://127.0.0.1:${options.ready.port}${options.ready.path}`;
      const poll = async () => {
        while (child.exitCode === null && child.signalCode === null) {
          const status = await fetch(readyUrl).then(
            (res) => res.body?.cancel().then(() => res.status) ?? res.status,
            () => 0,
          );
          if (status === 200) {
            clearTimeout(timer);
            resolve(`http://127.0.0.1:${options.ready?.port}`);
            return;
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      void poll();
    } else {
      child.stdout?.on('data', check);
      child.stderr?.on('data', check);
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    exited,
    kill,
    stop: async (graceMs = 10_000) => {
      kill('SIGTERM');
      const timer = setTimeout(() => kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
