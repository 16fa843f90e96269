import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { AppError } from '../../../kernel/errors.js';

/** Event-list cursors: opaque to clients, a position in one sort order of one partner's query. */
export interface CursorPosition {
  /** The page number this cursor opens (for `pagination.currentPage`). */
  page: number;
  /** `event_time` of the last row before the cursor, as the list returns it (ISO 8601, ms, Z). */
  time: string;
  /** `id` of the last row before the cursor. */
  id: string;
  /** `event_name` of that row (name sort only). */
  name?: string | undefined;
}

export interface CursorBinding {
  partnerId: string;
  merchantId: string;
  sortBy: string;
  sortOrder: string;
  /** Event names filtered on (any order; duplicates ignored). */
  names: readonly string[];
  /** The visitor filtered on (`muid=`); absent or null: none (a cursor made without it stays valid). */
  muid?: string | null;
  start: Date | null;
  end: Date | null;
}

const MAC_BYTES = 16;
const MAX_CURSOR = 1024;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function bindingText(b: CursorBinding): string {
  const names = [...new Set(b.names)].sort();
  return JSON.stringify([
    b.partnerId,
    b.merchantId,
    b.sortBy,
    b.sortOrder,
    names,
    b.start?.getTime() ?? null,
    b.end?.getTime() ?? null,
    // Only when set, so cursors made before the filter existed keep their MAC.
    ...(b.muid ? [b.muid] : []),
  ]);
}

function mac(key: Buffer, binding: CursorBinding, payload: string): Buffer {
  return createHmac('sha256', key)
    .update(bindingText(binding))
    .update('\n')
    .update(payload)
    .digest()
    .subarray(0, MAC_BYTES);
}

export function encodeCursor(key: Buffer, binding: CursorBinding, position: CursorPosition): string {
  const fields: (string | number)[] = [1, position.page, position.time, position.id];
  if (position.name !== undefined) fields.push(position.name);
  const payload = Buffer.from(JSON.stringify(fields)).toString('base64url');
  return `${payload}.${mac(key, binding, payload).toString('base64url')}`;
}

const invalid = () =>
  new AppError(
    'VALIDATION_ERROR',
    'cursor: not a cursor of this list (it was made for other filters, another sort or another API key, or it was altered)',
  );

/** Checks a cursor against the request it comes with; 400 VALIDATION_ERROR unless it was made for it. */
export function decodeCursor(key: Buffer, binding: CursorBinding, cursor: string): CursorPosition {
  if (cursor.length > MAX_CURSOR) throw invalid();
  const dot = cursor.indexOf('.');
  if (dot <= 0) throw invalid();
  const payload = cursor.slice(0, dot);
  const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
  const expected = mac(key, binding, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(fields) || fields[0] !== 1) throw invalid();
  const [, page, time, id, name] = fields as unknown[];
  const byName = binding.sortBy === 'event_name';
  if (
    typeof page !== 'number' ||
    !Number.isInteger(page) ||
    page < 2 ||
    typeof time !== 'string' ||
    !ISO_MS.test(time) ||
    typeof id !== 'string' ||
    (byName ? typeof name !== 'string' : name !== undefined)
  ) {
    throw invalid();
  }
  return { page, time, id, name: byName ? (name as string) : undefined };
}

/** The signing key: CURSOR_SECRET when given, else the database's own (made on first use). */
export async function loadCursorKey(db: Database, configured?: string): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  const made = randomBytes(32).toString('base64url');
  // One statement returning the key whoever made it: a concurrent first start conflicts, waits for that insert to
  // commit and gets its row back from DO UPDATE.
  const result = await db.execute(sql`insert into server_secrets (name, value) values ('cursor', ${made})
      on conflict (name) do update set name = excluded.name returning value`);
  // postgres.js answers an array of rows, PGlite `{ rows }`.
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { value?: unknown }[];
  const value = rows[0]?.value;
  if (typeof value !== 'string') throw new Error('server_secrets: the cursor key could not be read');
  return Buffer.from(value, 'base64url');
}
