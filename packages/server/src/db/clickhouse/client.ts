import { Readable } from 'node:stream';
import { type ClickHouseClient, type ClickHouseSettings, createClient } from '@clickhouse/client';

type ClickhouseParams = Record<string, unknown>;

interface CallOptions {
  /** Deadline of the call (ms): the client gives up, and the engine stops at `max_execution_time`. */
  timeoutMs?: number;
  settings?: ClickHouseSettings;
  /** A read of the write path: on the writers' session, never queued behind the reads'. */
  writer?: boolean;
}

/**
 * One small interface over the two ways to run the statistics' statements: chDB in this process or
 * a ClickHouse server by URL. The statements never know which.
 */
export interface Clickhouse {
  readonly kind: 'chdb' | 'server';
  readonly database: string;
  query<T>(sql: string, params?: ClickhouseParams, options?: CallOptions): Promise<T[]>;
  command(sql: string, params?: ClickhouseParams, options?: CallOptions): Promise<void>;
  insert(table: string, rows: readonly object[], options?: CallOptions): Promise<void>;
  /** Rows already written as TabSeparated text, into `table`. */
  insertTsv(table: string, body: string, options?: CallOptions): Promise<void>;
  close(): Promise<void>;
}

export type ClickhouseOptions =
  /** chDB in this process: one data directory per process (chDB locks it). */
  | { kind: 'chdb'; path: string; database: string; readers?: number }
  | { kind: 'server'; url: string; database?: string };

const DEFAULT_TIMEOUT_MS = 10_000;
const DATABASE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const MIB = 1_048_576;

/**
 * A read statement's share of the machine (chDB runs in this process: its threads and memory are
 * the server's). A GROUP BY past half the memory bound goes on on disk; a read past the bound
 * fails alone instead of taking the process's memory.
 */
const READ_LIMITS: ClickHouseSettings = {
  max_threads: 2,
  max_memory_usage: String(1024 * MIB),
  max_bytes_before_external_group_by: String(512 * MIB),
};

function withDeadline(options: CallOptions | undefined, limits: ClickHouseSettings = {}) {
  const timeoutMs = options?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    abort_signal: AbortSignal.timeout(timeoutMs),
    clickhouse_settings: {
      max_execution_time: Math.max(1, Math.ceil(timeoutMs / 1000)),
      session_timezone: 'UTC',
      ...limits,
      ...options?.settings,
    },
  };
}

function wrap(kind: Clickhouse['kind'], database: string, writer: ClickHouseClient, readers: ClickHouseClient[]) {
  let next = 0;
  // chDB runs one statement at a time per session: reads take turns over their own sessions, so a
  // long read never holds up an insert.
  const reader = () => readers[next++ % readers.length] as ClickHouseClient;
  const clickhouse: Clickhouse = {
    kind,
    database,
    async query<T>(sql: string, params?: ClickhouseParams, options?: CallOptions) {
      const result = await (options?.writer ? writer : reader()).query({
        query: sql,
        query_params: params,
        format: 'JSONEachRow',
        ...withDeadline(options, READ_LIMITS),
      });
      return result.json<T>();
    },
    async command(sql, params, options) {
      await writer.command({ query: sql, query_params: params, ...withDeadline(options) });
    },
    async insert(table, rows, options) {
      if (rows.length === 0) return;
      await writer.insert({ table, values: rows as object[], format: 'JSONEachRow', ...withDeadline(options) });
    },
    async insertTsv(table, body, options) {
      if (body === '') return;
      const values = Readable.from([Buffer.from(body)], { objectMode: false });
      await writer.insert({ table, values, format: 'TabSeparated', ...withDeadline(options) });
    },
    async close() {
      await Promise.allSettled([writer, ...readers].map((client) => client.close()));
    },
  };
  return clickhouse;
}

/**
 * Opens the statistics' ClickHouse and makes `database` the one every statement runs in (created
 * when missing). chDB: a session for writes and `readers` for reads, all on `path`.
 */
export async function openClickhouse(options: ClickhouseOptions): Promise<Clickhouse> {
  if (options.kind === 'server') {
    const url = new URL(options.url);
    const database = options.database ?? (url.pathname.replace(/^\//, '') || 'partner_tags');
    if (!DATABASE_NAME.test(database)) throw new Error(`not a ClickHouse database name: ${database}`);
    url.pathname = '/';
    const admin = createClient({ url: url.toString(), request_timeout: DEFAULT_TIMEOUT_MS });
    try {
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}`, ...withDeadline(undefined) });
    } finally {
      await admin.close();
    }
    const client = createClient({ url: url.toString(), database, request_timeout: DEFAULT_TIMEOUT_MS });
    return wrap('server', database, client, [client]);
  }
  if (!DATABASE_NAME.test(options.database)) throw new Error(`not a ClickHouse database name: ${options.database}`);
  const { createChdbConnection } = await import('chdb/connection');
  const open = async () => {
    const client = createClient({ connection: createChdbConnection({ path: options.path }) as never });
    await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${options.database}` });
    await client.command({ query: `USE ${options.database}` });
    return client;
  };
  const writer = await open();
  const readers = await Promise.all(Array.from({ length: options.readers ?? 2 }, open));
  return wrap('chdb', options.database, writer, readers);
}
