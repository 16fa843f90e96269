import { DrizzleQueryError, type SQL } from 'drizzle-orm';
import type { Database } from './client.js';
import { deadlineError } from './deadline.js';
import { toQuery } from './read-rows.js';

/** What `copyRows` read: COPY text rows (each ending in `\n`) as PostgreSQL sent them, and how many. */
export interface CopiedRows {
  bytes: Buffer;
  rows: number;
  /** The buffer `bytes` lies in (the one given, or a larger one): give it to a later `copyRows` once `bytes` is used. */
  buffer: Buffer;
  /** True when `maxBytes` stopped the read: `rows` are whole rows, more may follow. */
  cut: boolean;
}

interface CopyQuery extends Promise<unknown> {
  readable(): Promise<NodeJS.ReadableStream & { destroy(error?: Error): void }>;
  /** Set by the patched postgres.js once the query is sent: destroys its connection. */
  discard?: (error: Error) => void;
}
interface PostgresJsClient {
  unsafe(query: string): CopyQuery;
  /** The pool's client deadline (ms; db/client.ts sets a number). */
  options: { query_timeout?: number | null };
}

/**
 * A value as a PostgreSQL literal, for the one statement that takes no parameters. Null for anything else: the caller
 * reads rows instead.
 */
export function literal(value: unknown): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null;
  if (typeof value !== 'string' || value.includes('\0')) return null;
  return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** `text` with each `$n` replaced by its parameter as a literal, in one pass; null when one cannot be. */
function inlineParams(text: string, params: readonly unknown[]): string | null {
  let failed = false;
  const out = text.replace(/\$(\d+)/g, (_, n: string) => {
    const value = literal(params[Number(n) - 1]);
    if (value === null) failed = true;
    return value ?? '';
  });
  return failed ? null : out;
}

/**
 * Runs `COPY TO STDOUT` and returns its rows as the bytes PostgreSQL sent, never parsed into rows or strings here.
 * Null on PGlite or when a parameter cannot be inlined: the caller reads rows instead.
 */
export async function copyRows(
  db: Database,
  statement: SQL,
  into?: Buffer,
  /** Stop once this many bytes are read. */
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<CopiedRows | null> {
  const client = (db as unknown as { $client: PostgresJsClient | object }).$client;
  if (!('unsafe' in client) || !('options' in client)) return null;
  const query = toQuery(statement);
  const inlined = inlineParams(query.sql, query.params);
  if (inlined === null) return null;
  const text = `copy (${inlined}) to stdout`;
  const ms = client.options.query_timeout ?? 0;
  const copy = client.unsafe(text);
  let timer: NodeJS.Timeout | undefined;
  try {
    const stream = await copy.readable();
    return await new Promise<CopiedRows>((resolve, reject) => {
      let bytes = into ?? Buffer.allocUnsafe(1 << 20);
      let size = 0;
      let rows = 0;
      let cut = false;
      if (ms > 0) {
        timer = setTimeout(() => {
          const error = deadlineError(ms, true);
          copy.discard ? copy.discard(error) : stream.destroy(error);
          reject(error);
        }, ms);
      }
      // One chunk per row: postgres.js pushes each CopyData message, and a backend's CopyData messages always
      // correspond to single rows (protocol docs, "COPY Operations").
      stream.on('data', (chunk: Buffer) => {
        if (cut) return;
        if (size + chunk.length > bytes.length) {
          const grown = Buffer.allocUnsafe(Math.max(bytes.length * 2, size + chunk.length));
          grown.set(bytes.subarray(0, size));
          bytes = grown;
        }
        bytes.set(chunk, size);
        size += chunk.length;
        rows++;
        if (size >= maxBytes) {
          cut = true;
          const stop = new Error('copy-rows: batch byte limit reached');
          copy.discard ? copy.discard(stop) : stream.destroy(stop);
          resolve({ bytes: bytes.subarray(0, size), rows, buffer: bytes, cut });
        }
      });
      stream.on('end', () => resolve({ bytes: bytes.subarray(0, size), rows, buffer: bytes, cut }));
      stream.on('error', reject);
    });
  } catch (cause) {
    throw new DrizzleQueryError(text, [], cause instanceof Error ? cause : new Error(String(cause)));
  } finally {
    clearTimeout(timer);
  }
}
