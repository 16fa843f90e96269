import http from 'node:http';
import { sql } from 'drizzle-orm';
import type { TestServer } from '../../src/testing/index.js';

/** The size of one event's data here: about the largest an event may carry (16 KB). */
const BIG_EVENT_CHARS = 16_000;

/**
 * Inserts `count` events of about 16 KB each for the merchant, ids `big-<from + 1..>`, `perStatement`
 * a statement (each NOTIFYs the streams, as ingestion's commits do). Their ids go through
 * `event_ids` first, as ingestion's do (0028); seq is left to the trigger (0026: from the writing
 * transaction, so above every open stream's start). Returns `from + count`: the events inserted.
 */
export async function insertBigEvents(
  server: TestServer,
  merchantId: string,
  tagId: string,
  count: number,
  from = 0,
  perStatement = 50,
  /** A pause after each statement (ms): lets readers that keep up take each burst. */
  pauseMs = 0,
  /** Characters of each event's data (default: about the largest). */
  chars = BIG_EVENT_CHARS,
): Promise<number> {
  const db = server.app.database.db;
  for (let first = from + 1; first <= from + count; first += perStatement) {
    const last = Math.min(from + count, first + perStatement - 1);
    await db.execute(sql`
      with ids as (
        insert into event_ids (merchant_id, id, event_time)
        select ${merchantId}::uuid, 'big-' || g, timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
        from generate_series(${first}::int, ${last}::int) g
        on conflict do nothing
        returning id, event_time
      )
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      select ${merchantId}::uuid, ids.id, ${tagId}::uuid, 'u' || (g % 97), 'PageView', ids.event_time,
        '{"pad":"' || repeat('x', ${Math.max(0, chars - 10)}::int) || '"}'
      from ids, lateral (select substr(ids.id, 5)::int as g) n
      order by g`);
    if (pauseMs > 0) await sleep(pauseMs);
  }
  return from + count;
}

/** A GET whose body is not read (paused after its first chunk) until `resume()`. */
export interface StalledRead {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Reads the rest of the body; resolves with all of it once the server ends or closes it. */
  resume(): Promise<string>;
  destroy(): void;
}

export function stalledGet(url: string, apiKey: string): Promise<StalledRead> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${apiKey}`, 'accept-encoding': 'identity' };
    const req = http.get(url, { headers, agent: false }, (res) => {
      res.pause();
      const chunks: Buffer[] = [];
      const body = new Promise<string>((done) => {
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        const end = () => done(Buffer.concat(chunks).toString('utf8'));
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        resume: () => {
          res.resume();
          return body;
        },
        destroy: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}

/** The last line of an NDJSON body, parsed. */
export function lastLine(body: string): Record<string, unknown> {
  const lines = body.trimEnd().split('\n');
  return JSON.parse(lines.at(-1) as string) as Record<string, unknown>;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `condition()` holds (polled every 50 ms); rejects after `ms` naming `what`. */
export async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}
