/**
 * Zod-free pagination normaliser, shared by the server's tests and bundled into the SDK.
 * It accepts every envelope the spec names (section 2.5) and never throws.
 */

/** The one pagination shape clients work with, whatever the server sent. */
export interface NormalizedPagination {
  currentPage: number;
  itemsPerPage: number;
  /** Total matching items, or `null` when the server did not say. */
  totalItems: number | null;
  /** Total pages, or `null` when the server did not say. */
  totalPages: number | null;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  /** The server's cursor for the next page, or `null` when it sent none (last page, or no cursors). */
  nextCursor: string | null;
}

export interface PageRequest {
  /** The page that was asked for (1-based). */
  page: number;
  /** The page size that was asked for, when known. */
  limit?: number;
  /** How many items the page actually holds. */
  itemCount: number;
}

function int(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
    return Math.trunc(Number(value));
  }
  return undefined;
}

function bool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return undefined;
}

/**
 * Normalises `{currentPage, itemsPerPage, totalItems | total, totalPages, hasNextPage,
 * hasPreviousPage, nextCursor?}`, `{page, limit, total, totalPages}`, partial forms of both, or nothing at all.
 * Missing flags are derived from the totals; with no totals, a page shorter than the requested
 * limit (or an empty page) means the end.
 */
export function normalizePagination(raw: unknown, request: PageRequest): NormalizedPagination {
  const p = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const currentPage = int(p.currentPage) ?? int(p.page) ?? request.page;
  const itemsPerPage = int(p.itemsPerPage) ?? int(p.limit) ?? request.limit ?? request.itemCount;
  const totalItems = int(p.totalItems) ?? int(p.total) ?? null;
  let totalPages = int(p.totalPages) ?? null;
  if (totalPages === null && totalItems !== null && itemsPerPage > 0) {
    totalPages = Math.ceil(totalItems / itemsPerPage);
  }
  // A server that sends `nextCursor` decides the end with it (null: the last page).
  const nextCursor = typeof p.nextCursor === 'string' && p.nextCursor.length > 0 ? p.nextCursor : null;
  let hasNextPage = p.nextCursor === undefined ? bool(p.hasNextPage) : nextCursor !== null;
  if (hasNextPage === undefined) {
    if (totalPages !== null) hasNextPage = currentPage < totalPages;
    else if (request.itemCount === 0) hasNextPage = false;
    else hasNextPage = request.limit === undefined ? false : request.itemCount >= request.limit;
  }
  const hasPreviousPage = bool(p.hasPreviousPage) ?? currentPage > 1;
  return { currentPage, itemsPerPage, totalItems, totalPages, hasNextPage, hasPreviousPage, nextCursor };
}
