import type { ChildProcess } from 'node:child_process';

export interface NatsNode {
  name: string;
  clientPort: number;
  clusterPort: number;
  monitorPort: number;
  storeDir: string;
  /** `nats://127.0.0.1:<clientPort>` */
  url: string;
  process: ChildProcess | undefined;
  /** The last 20,000 characters the node printed (not kept for a detached cluster). */
  output: string;
  exited: Promise<number | string | null>;
}

export interface NatsClusterOptions {
  size?: number;
  clusterName?: string;
  /** The parent of the nodes' store directories (default: a new temporary one, removed by stop()). */
  dir?: string;
  /** Node i listens on base + i; default: free ports picked by the OS. */
  basePorts?: { client: number; cluster: number; monitor: number };
  /** The processes outlive this one (output in <dir>/<name>.log). */
  detached?: boolean;
  /** How long to wait for a meta leader at start (default 30 s). */
  timeoutMs?: number;
}

export interface NatsCluster {
  dir: string;
  nodes: NatsNode[];
  clusterName: string;
  /** Every client URL, comma-separated (for EVENT_LOG_URL). */
  url: string;
  alive(node: NatsNode): boolean;
  /** The meta leader's name once every running node names the same one. */
  metaLeader(): Promise<string | undefined>;
  waitForMetaLeader(ms?: number): Promise<string>;
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  restart(name: string): Promise<void>;
  stop(): Promise<void>;
}

export function natsServerAvailable(): boolean;
/** GET http://127.0.0.1:<monitor port><pathAndQuery> as JSON, or undefined (down, slow). */
export function monitor(node: Pick<NatsNode, 'monitorPort'>, pathAndQuery: string, ms?: number): Promise<unknown>;
export function startNatsCluster(options?: NatsClusterOptions): Promise<NatsCluster>;
