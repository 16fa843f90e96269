import { describe, expect, it } from 'vitest';
import { buildPagination, normalizePagination, Pagination } from '../src/index.js';

describe('normalizePagination', () => {
  it('reads nextCursor: a string is followed, null ends the list whatever the totals say', () => {
    const page = { ...buildPagination(1, 10, 35), nextCursor: 'abc.def' };
    expect(normalizePagination(page, { page: 1, limit: 10, itemCount: 10 })).toMatchObject({
      hasNextPage: true,
      nextCursor: 'abc.def',
    });
    const last = { ...buildPagination(1, 10, 35), nextCursor: null };
    expect(normalizePagination(last, { page: 1, limit: 10, itemCount: 10 })).toMatchObject({
      hasNextPage: false,
      nextCursor: null,
    });
    expect(normalizePagination({ ...last, nextCursor: 42 }, { page: 1, limit: 10, itemCount: 10 }).nextCursor).toBe(
      null,
    );
  });

  it('reads the primary envelope', () => {
    const raw = buildPagination(2, 10, 35);
    expect(Pagination.parse(raw)).toEqual(raw);
    expect(normalizePagination(raw, { page: 2, limit: 10, itemCount: 10 })).toEqual({
      currentPage: 2,
      itemsPerPage: 10,
      totalItems: 35,
      totalPages: 4,
      hasNextPage: true,
      hasPreviousPage: true,
      nextCursor: null,
    });
  });

  it('reads `total` when `totalItems` is absent', () => {
    const result = normalizePagination(
      { currentPage: 1, itemsPerPage: 12, total: 12, totalPages: 1, hasNextPage: false, hasPreviousPage: false },
      { page: 1, limit: 12, itemCount: 12 },
    );
    expect(result.totalItems).toBe(12);
    expect(result.hasNextPage).toBe(false);
  });

  it('reads the alternative envelope and derives the flags from the totals', () => {
    expect(normalizePagination({ page: 3, limit: 5, total: 15, totalPages: 3 }, { page: 3, itemCount: 5 })).toEqual({
      currentPage: 3,
      itemsPerPage: 5,
      totalItems: 15,
      totalPages: 3,
      hasNextPage: false,
      hasPreviousPage: true,
      nextCursor: null,
    });
    expect(normalizePagination({ page: 1, limit: 5, total: 6 }, { page: 1, itemCount: 5 })).toMatchObject({
      totalPages: 2,
      hasNextPage: true,
    });
  });

  it('without a pagination object, a full page means more and a short or empty page means the end', () => {
    expect(normalizePagination(undefined, { page: 1, limit: 10, itemCount: 10 }).hasNextPage).toBe(true);
    expect(normalizePagination(undefined, { page: 1, limit: 10, itemCount: 3 }).hasNextPage).toBe(false);
    expect(normalizePagination(null, { page: 4, limit: 10, itemCount: 0 })).toMatchObject({
      currentPage: 4,
      totalItems: null,
      totalPages: null,
      hasNextPage: false,
      hasPreviousPage: true,
    });
  });

  it('accepts numeric strings and ignores garbage', () => {
    expect(
      normalizePagination(
        { currentPage: '2', itemsPerPage: '10', totalItems: 'x' },
        { page: 2, limit: 10, itemCount: 1 },
      ),
    ).toMatchObject({ currentPage: 2, itemsPerPage: 10, totalItems: null, hasNextPage: false });
  });
});

describe('buildPagination', () => {
  it('gives zero totals for an empty list', () => {
    expect(buildPagination(1, 10, 0)).toEqual({
      currentPage: 1,
      itemsPerPage: 10,
      totalItems: 0,
      total: 0,
      totalPages: 0,
      hasNextPage: false,
      hasPreviousPage: false,
    });
  });
});
