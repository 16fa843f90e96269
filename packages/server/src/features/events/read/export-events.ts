import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { copyRows } from '../../../db/copy-rows.js';
import type { ReadDb } from '../../../db/read-routing.js';
import { readRows } from '../../../db/read-rows.js';
import { AppError } from '../../../kernel/errors.js';
import type { AuthenticatedPartner } from '../../partners/authenticate.js';
import { type CursorBinding, type CursorPosition, decodeCursor, encodeCursor } from './cursor.js';
import {
  bindingOf,
  countQuery,
  dataQuery,
  type ListEventsParams,
  merchantOnPrimary,
  ownedMerchant,
  parseEventFilters,
} from './list-events.js';
import { lastLineOfCopy, ndjsonFromCopy } from './ndjson-from-copy.js';

/** Events per keyset batch read as rows (PGlite): one short statement each (well inside the statement deadline). */
const EXPORT_BATCH = 2_000;
/** Fewer, larger batches lose less between statements (docs/decisions/export.md). */
export const COPY_BATCH = 10_000;
const EXPORT_BATCH_BYTES = 2_097_152;
/** The row size assumed before the first batch: the largest event (16 KB of data and its fields). */
const LARGEST_ROW_BYTES = 17_000;
/** A COPY batch is cut once it holds this many times the byte target: rows far larger than the previous batch's. */
const COPY_CUT_FACTOR = 2;

/** Rows of `averageBytes` in a batch of `targetBytes`, between 2 and `most`. */
function rowsForBytes(targetBytes: number, averageBytes: number, most: number): number {
  return Math.max(2, Math.min(most, Math.floor(targetBytes / Math.max(1, averageBytes))));
}

/** What an export holds for its reader, counted in the process's budget (runtime/held-bytes.ts). */
interface ExportHold {
  take(bytes: number): void;
  give(bytes: number): void;
}

export interface ExportOptions {
  /** The bytes a batch aims at (EXPORT_BATCH_BYTES). */
  batchBytes?: number;
  /** Where the batches' bytes are counted from read to written out. */
  hold?: ExportHold;
}

export type ExportEventsParams = Omit<ListEventsParams, 'page' | 'limit'> & {
  /** Resume a cut download after this event (the `id` of the last line received). */
  afterId?: string | undefined;
};

/** One batch of the export: NDJSON (one line per event, each ending in `\n`) and its size. */
interface ExportBatch {
  /** The lines as UTF-8 bytes (COPY path) or text (row path), written to the response as they are. */
  lines: string | Buffer;
  count: number;
  /** Call once `lines` is written out (the write's callback): its buffer then holds a later batch. */
  release?: () => void;
}

/** What the export ends with: `{"complete": true, "count": N, "cursor": "..."}`. */
interface ExportSummary {
  complete: true;
  count: number;
  /** Continues after the last exported event (as `cursor` of a later export or of the list); null when nothing was read. */
  cursor: string | null;
}

export interface EventExport {
  batches: AsyncGenerator<ExportBatch, ExportSummary, undefined>;
}

/**
 * Opens an export of a merchant's events with the list's filters and sort. Every batch is its own short statement, so
 * events inserted during an export appear if they sort after the position reached, like a cursor walk.
 */
export async function openEventExport(
  reads: ReadDb,
  partner: AuthenticatedPartner,
  params: ExportEventsParams,
  cursorKey: Buffer,
  options: ExportOptions = {},
): Promise<EventExport> {
  const filters = parseEventFilters({ ...params, page: 1, limit: EXPORT_BATCH });
  const binding = bindingOf(partner.id, { ...params, page: 1, limit: EXPORT_BATCH }, filters);
  if (params.cursor && params.afterId) throw new AppError('VALIDATION_ERROR', 'send cursor or afterId, not both');
  const cursorPosition = params.cursor ? decodeCursor(cursorKey, binding, params.cursor) : null;
  // The database that answers the checks reads every batch: a replica that fails mid-way ends the
  // body unfinished, and `afterId` resumes it (on the primary while the replica is down).
  return reads.run(
    'events_export',
    (db) => openOn(db, partner, params, cursorKey, options, { filters, binding, cursorPosition }),
    { primaryCheck: merchantOnPrimary(partner.id, params.merchantId) },
  );
}

/** The export's checks and its walk on one database. */
async function openOn(
  db: Database,
  partner: AuthenticatedPartner,
  params: ExportEventsParams,
  cursorKey: Buffer,
  options: ExportOptions,
  {
    filters,
    binding,
    cursorPosition,
  }: { filters: ReturnType<typeof parseEventFilters>; binding: CursorBinding; cursorPosition: CursorPosition | null },
): Promise<EventExport> {
  const [countRows, afterRows] = await readRows(db, [
    countQuery(partner.id, params.merchantId, filters),
    // Its event_time from event_ids' key, then the row by events_merchant_time_idx (events has no
    // key by id: migration 0028).
    sql`select e.id, e.event_name, to_char(e.event_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as event_time
      from event_ids i join events e on e.merchant_id = i.merchant_id and e.event_time = i.event_time and e.id = i.id
      where i.merchant_id = ${params.merchantId}::uuid and i.id = ${params.afterId ?? ''}
        and ${ownedMerchant(partner.id, params.merchantId)}`,
  ]);
  const [access] = countRows ?? [];
  if (!access) throw new AppError('MERCHANT_NOT_FOUND', `No merchant ${params.merchantId} under this partner`);
  if (!access.tagged) {
    throw new AppError('MERCHANT_NOT_FOUND', `Merchant ${params.merchantId} has no tag integration yet`);
  }
  const sort = { sortBy: params.sortBy, sortOrder: params.sortOrder, page: 1, limit: EXPORT_BATCH };
  const walk = new ExportWalk({
    db,
    query: (limit, position, shape) =>
      dataQuery(partner.id, params.merchantId, { ...sort, limit }, filters, position, shape),
    byName: params.sortBy === 'event_name',
    batchBytes: options.batchBytes ?? EXPORT_BATCH_BYTES,
    hold: options.hold,
    cursorKey,
    binding,
    position: params.afterId === undefined ? cursorPosition : afterIdPosition(params.afterId, afterRows?.[0]),
  });
  return { batches: walk.batches() };
}

/** The position after the event `afterId` names (its row read with the merchant's check); 400 without one. */
function afterIdPosition(afterId: string, after: Record<string, unknown> | undefined): CursorPosition {
  if (!after) throw new AppError('VALIDATION_ERROR', `afterId: no event ${afterId} for this merchant`);
  return { page: 2, time: after.event_time as string, id: after.id as string, name: after.event_name as string };
}

interface ExportWalkOptions {
  db: Database;
  /** The batch statement: `limit` (plus one) rows after `position` in the list's order and filters. */
  query: (limit: number, position: CursorPosition | null, shape?: 'line') => SQL;
  byName: boolean;
  batchBytes: number;
  hold: ExportHold | undefined;
  cursorKey: Buffer;
  binding: CursorBinding;
  /** Where the export starts: after a cursor's or `afterId`'s event, or at the top. */
  position: CursorPosition | null;
}

/** The keyset walk of one export: its batches in order, then the summary. */
class ExportWalk {
  private position: CursorPosition | null;
  private count = 0;
  // The first batch asks for a full batch and relies on the byte cut: a first batch sized for the largest events cost
  // ordinary exports one more, tiny, round trip.
  private rows = COPY_BATCH;
  private copies = 0;
  // The buffers batches are read into and written from, reused from batch to batch: two of each (one being read or
  // written while the other is made into lines).
  private readonly reads: Buffer[] = [];
  private readonly writes: Buffer[] = [];

  constructor(private readonly options: ExportWalkOptions) {
    this.position = options.position;
  }

  async *batches(): AsyncGenerator<ExportBatch, ExportSummary, undefined> {
    const finished = yield* this.copyBatches();
    if (!finished) yield* this.rowBatches();
    return this.summary();
  }

  /** PostgreSQL: COPY batches of the list's columns, made into lines here. */
  private async *copyBatches(): AsyncGenerator<ExportBatch, boolean, undefined> {
    const { batchBytes, hold } = this.options;
    let next = this.copyBatch();
    try {
      for (;;) {
        const copied = await next;
        if (!copied) return false;
        if (copied.rows > 0) {
          this.position = this.after(lastLineOfCopy(copied.bytes));
          this.rows = rowsForBytes(batchBytes, copied.bytes.length / copied.rows, COPY_BATCH);
        }
        const more = copied.more;
        if (more) next = this.copyBatch();
        const batch = ndjsonFromCopy(copied.bytes, copied.rows, this.writes.pop());
        this.reads.push(copied.buffer);
        hold?.take(batch.bytes.length);
        hold?.give(copied.bytes.length);
        this.count += batch.lines;
        const release = releaseOnce(() => {
          this.writes.push(batch.buffer);
          hold?.give(batch.bytes.length);
        });
        if (!more) {
          if (batch.lines > 0) yield { lines: batch.bytes, count: batch.lines, release };
          return true;
        }
        yield { lines: batch.bytes, count: batch.lines, release };
      }
    } finally {
      // A download cut while a batch is being read: that read ends on its own, unobserved.
      next.catch(() => {});
    }
  }

  private async copyBatch() {
    const { db, query, batchBytes, hold } = this.options;
    const limit = this.rows;
    // The statement reads limit + 1 rows: a batch of `limit` rows says whether more follow.
    const statement = query(limit - 1, this.position);
    // The first batch's rows are a guess, so it is cut at the target itself.
    const cutAt = this.copies++ === 0 ? batchBytes : batchBytes * COPY_CUT_FACTOR;
    const copied = await copyRows(db, statement, this.reads.pop(), cutAt);
    hold?.take(copied?.bytes.length ?? 0);
    return copied && { ...copied, more: copied.cut || copied.rows === limit };
  }

  /** PGlite (or a value COPY cannot carry): batches of lines written by the database. */
  private async *rowBatches(): AsyncGenerator<ExportBatch, void, undefined> {
    const { db, query, batchBytes, hold } = this.options;
    let limit = rowsForBytes(batchBytes, LARGEST_ROW_BYTES, EXPORT_BATCH);
    for (;;) {
      const [lines = []] = await readRows(db, [query(limit, this.position, 'line')]);
      // The query reads one row more than a batch (to know a next page exists, as the list does).
      const n = Math.min(lines.length, limit);
      if (n > 0) {
        let text = '';
        for (let i = 0; i < n; i++) text += `${(lines[i] as { line: string }).line}\n`;
        this.position = this.after((lines[n - 1] as { line: string }).line);
        this.count += n;
        const size = text.length;
        hold?.take(size);
        yield { lines: text, count: n, release: releaseOnce(() => hold?.give(size)) };
        limit = rowsForBytes(batchBytes, size / n, EXPORT_BATCH);
      }
      if (lines.length <= n) break;
    }
  }

  /** The position after a line (`{"id":...,"event_name":...,"event_time":...}` first). */
  private after(line: string): CursorPosition {
    const last = JSON.parse(line) as { id: string; event_name: string; event_time: string };
    return { page: 2, time: last.event_time, id: last.id, name: this.options.byName ? last.event_name : undefined };
  }

  private summary(): ExportSummary {
    const { cursorKey, binding, byName } = this.options;
    const position = this.position;
    return {
      complete: true,
      count: this.count,
      cursor: position
        ? encodeCursor(cursorKey, binding, { ...position, name: byName ? position.name : undefined })
        : null,
    };
  }
}

/** `release` of a batch: gives its bytes back once, however often it is called. */
function releaseOnce(give: () => void): () => void {
  let released = false;
  return () => {
    if (!released) give();
    released = true;
  };
}
