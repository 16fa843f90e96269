import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { copyRows, literal } from '../../src/db/copy-rows.js';
import { readRows } from '../../src/db/read-rows.js';
import { ndjsonFromCopy } from '../../src/features/events/read/ndjson-from-copy.js';
import {
  createScratchDatabase,
  postgresAnswers,
  type ScratchDatabase,
  startTcpProxy,
  type TcpProxy,
  viaPort,
} from '../helpers/hardening.js';

/**
 * The export's COPY reader (db/copy-rows.ts) on a real PostgreSQL, through a TCP proxy: values
 * inlined as literals read back exactly, its rows made into lines are JSON.stringify of each row, COPY
 * after COPY on one connection (the patched postgres.js CopyDone), and a connection that goes
 * silent mid-copy fails within the deadline.
 */
const STATEMENT_TIMEOUT_MS = 1000;
const DEADLINE_MS = STATEMENT_TIMEOUT_MS + 500;

const NASTY = [
  "it's",
  "\\'; select 1; --",
  'back\\slash \\\\ double',
  '$1 $2 $10',
  "E'x'",
  'tab\there\nnewline',
  'é€😀 Ünïcode',
  '\u0001\u001f\u007f',
  'carriage\rvertical\u000bbackspace\bform\f "quoted"',
  '\u2028\u2029 \\N \\v',
  '',
];

describe('COPY rows (PostgreSQL)', async () => {
  const available = await postgresAnswers();
  let scratch: ScratchDatabase;
  let proxy: TcpProxy;
  let handle: DatabaseHandle;

  beforeAll(async () => {
    if (!available) return;
    scratch = await createScratchDatabase('h_copy_rows');
    proxy = await startTcpProxy(Number(new URL(scratch.url).port || 5432));
    handle = await openDatabase({
      kind: 'postgres',
      url: viaPort(scratch.url, proxy.port),
      maxConnections: 1,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
    });
  }, 60_000);
  afterAll(async () => {
    await proxy?.setMode('forward');
    await handle?.close();
    await proxy?.close();
    await scratch?.drop();
  });

  it.skipIf(!available)(
    'inlines values as literals that read back exactly; refuses what text cannot hold',
    async () => {
      for (const value of NASTY) {
        const [rows] = await readRows(handle.db, [sql.raw(`select ${literal(value)}::text as v`)]);
        expect(rows?.[0]?.v).toBe(value);
      }
      expect(literal(42)).toBe('42');
      for (const value of ['a\0b', Number.NaN, Number.POSITIVE_INFINITY, null, undefined, {}, true]) {
        expect(literal(value)).toBeNull();
      }
    },
  );

  it.skipIf(!available)(
    'gives the rows with their parameters inlined; made into lines, each is JSON.stringify of the row',
    async () => {
      // Every nasty value in every column, the parameters themselves inlined as literals.
      const statement = sql`select ${NASTY[1]}::text || v as id, v as muid, v || ${NASTY[3]}::text as event_name,
        'T' || g as event_time, ${NASTY[5]}::text || v || ${NASTY[0]}::text as raw_data,
        'granted' as consent
      from unnest(array[${sql.join(
        NASTY.map((v) => sql`${v}`),
        sql`, `,
      )}]::text[]) v, generate_series(1, 3) g order by g, v`;
      const [rows = []] = await readRows(handle.db, [statement]);
      const copied = await copyRows(handle.db, statement);
      expect(copied?.rows).toBe(rows.length);
      const made = ndjsonFromCopy(copied?.bytes ?? Buffer.alloc(0), copied?.rows ?? 0);
      const expected = rows.map((r) =>
        JSON.stringify({
          id: r.id,
          muid: r.muid,
          event_name: r.event_name,
          event_time: r.event_time,
          raw_data: r.raw_data,
          consent: r.consent,
        }),
      );
      expect(made.bytes.toString().split('\n').slice(0, -1)).toEqual(expected);
      const none = await copyRows(handle.db, sql`select 'x' as line where false`);
      expect({ bytes: none?.bytes, rows: none?.rows }).toEqual({ bytes: Buffer.alloc(0), rows: 0 });
    },
  );

  it.skipIf(!available)(
    'runs COPY after COPY on one connection, then ordinary queries (no paused socket)',
    async () => {
      // A handle of its own with the server's usual deadline: the file's 1.5 s one is for the
      // silent-connection test, and five 8 MB COPYs on a loaded CI machine once took longer.
      const own = await openDatabase({ kind: 'postgres', url: viaPort(scratch.url, proxy.port), maxConnections: 1 });
      try {
        await copyAfterCopy(own);
      } finally {
        await own.close();
      }
    },
    60_000,
  );

  async function copyAfterCopy(handle: DatabaseHandle): Promise<void> {
    // 8 MB per COPY: the readable's buffer fills, so postgres.js pauses the socket mid-copy.
    const statement = sql`select repeat('x', 150) || g as line from generate_series(1, ${50_000}::int) g`;
    // Each COPY after the first reads into the buffer of the one before (the export's reuse):
    // the first one's 1 KB grows to hold the 8 MB, then stays.
    let buffer: Buffer | undefined = Buffer.alloc(1024);
    const first = buffer;
    for (let i = 0; i < 5; i++) {
      const copied = await copyRows(handle.db, statement, buffer);
      expect(copied?.rows).toBe(50_000);
      if (i === 0) expect(copied?.buffer).not.toBe(first);
      else expect(copied?.buffer).toBe(buffer);
      expect(copied?.bytes.buffer).toBe(copied?.buffer.buffer);
      const text = copied?.bytes.toString() ?? '';
      expect(text.startsWith(`${'x'.repeat(150)}1\n`)).toBe(true);
      expect(text.endsWith(`${'x'.repeat(150)}50000\n`)).toBe(true);
      buffer = copied?.buffer;
    }
    const [rows] = await readRows(handle.db, [sql`select 1 as one`]);
    expect(rows).toEqual([{ one: 1 }]);
  }

  it.skipIf(!available)(
    'postgres.js: a COPY read with backpressure leaves its connection usable (patched CopyDone)',
    async () => {
      // An async iterator reads slower than the socket delivers: the readable's buffer fills and
      // postgres.js pauses the socket. Unpatched, the last pause was never undone: the next query
      // on that connection waited forever (here: until the deadline).
      const client = postgres(scratch.url, { max: 1, onnotice: () => {}, query_timeout: DEADLINE_MS });
      try {
        for (let i = 0; i < 3; i++) {
          const readable = await client
            .unsafe("copy (select repeat('x', 150) || g from generate_series(1, 50000) g) to stdout")
            .readable();
          let lines = 0;
          let reads = 0;
          for await (const chunk of readable as AsyncIterable<Buffer>) {
            for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
            if (++reads % 8 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
          }
          expect(lines).toBe(50_000);
        }
        expect(await client`select 2 as two`).toEqual([{ two: 2 }]);
      } finally {
        await client.end({ timeout: 1 });
      }
    },
  );

  it.skipIf(!available)(
    'fails within the deadline when the connection goes silent mid-copy, then recovers',
    async () => {
      // Lines trickle out (1 ms each), well within statement_timeout per row but not as a whole.
      const slow = sql`select repeat('y', 8000) || g || (select '' from pg_sleep(0.001 + g * 0)) as line
      from generate_series(1, 800) g`;
      const pending = copyRows(handle.db, slow).then(
        () => null,
        (e: unknown) => e,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = performance.now();
      await proxy.setMode('blackhole');
      const error = (await pending) as { cause?: { code?: string } } | null;
      expect(performance.now() - started).toBeLessThan(DEADLINE_MS + 1000);
      expect(error?.cause?.code).toBe('QUERY_DEADLINE');
      // Healed: the pool replaces the discarded connection (one made meanwhile may still fail).
      await proxy.setMode('forward');
      const healed = performance.now();
      let copied: Awaited<ReturnType<typeof copyRows>> = null;
      while (!copied && performance.now() - healed < 10_000) {
        copied = await copyRows(handle.db, sql`select 'back' as line`).catch(() => null);
      }
      expect(copied?.bytes.toString()).toBe('back\n');
    },
    30_000,
  );
});
