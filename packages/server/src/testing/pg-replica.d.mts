export interface PgReplicaOptions {
  /** Where both data directories go (default: a new temporary one, removed by stop()). */
  dir?: string;
  /** Default: free ports picked by the OS. */
  primaryPort?: number;
  replicaPort?: number;
  /** The servers outlive this process. */
  detached?: boolean;
  /** Bound of every wait (initdb, start, base backup, streaming); default 60 s. */
  timeoutMs?: number;
}

export interface PgReplica {
  dir: string;
  primaryPort: number;
  replicaPort: number;
  /** Milliseconds from the call to a streaming replica. */
  startupMs: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>` (default database `postgres`). */
  primaryUrl(database?: string): string;
  replicaUrl(database?: string): string;
  stopReplica(mode?: 'immediate' | 'fast'): void;
  startReplica(): void;
  stop(): Promise<void>;
}

export const PG_BIN: string;
export function pgReplicaAvailable(): boolean;
export function startPgReplica(options?: PgReplicaOptions): Promise<PgReplica>;
export function stopPgReplicaDir(dir: string): void;
