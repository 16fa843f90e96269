import type { ChildProcess } from 'node:child_process';
import { freePort, spawnServer } from '@partner/server/bench';

export interface Child {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `node <script>` (`--import tsx` for TypeScript) in `cwd` and waits until `GET <url><readyPath>` answers 200. */
export async function startChild(options: {
  cwd: string;
  script: string;
  env: Record<string, string>;
  readyPath: string;
  name: string;
  /** Extra node flags (for example `--cpu-prof`). */
  nodeArgs?: string[];
}): Promise<Child> {
  const port = await freePort();
  const server = await spawnServer({
    cwd: options.cwd,
    script: options.script,
    inheritEnv: true,
    env: { ...options.env, HOST: '127.0.0.1' },
    // BENCH_CPU_PROF=<dir>: every child writes a CPU profile there when it stops (bench/README.md).
    nodeArgs: [
      ...(options.nodeArgs ?? []),
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ],
    ready: { port, path: options.readyPath },
    timeoutMs: 60_000,
    outputLimit: 4000,
  }).catch((error: unknown) => {
    throw new Error(`${options.name} did not become ready: ${error instanceof Error ? error.message : String(error)}`);
  });
  return {
    url: server.url,
    process: server.child,
    stop: async () => {
      await server.stop(10_000);
    },
  };
}
