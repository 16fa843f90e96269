import { z } from 'zod';

/** Largest accepted `page`; deeper pages answer 400 rather than being clamped. */
export const MAX_PAGE = 1_000_000;
export const MAX_LIMIT = 100;

/** `page` and `limit` query parameters with the given default limit (spec section 8). */
export function paginationQuery(defaultLimit: number) {
  return {
    page: z
      .number({ message: 'must be an integer' })
      .int({ message: 'must be an integer' })
      .min(1, { message: 'must be at least 1' })
      .max(MAX_PAGE, { message: `must be at most ${MAX_PAGE}` })
      .default(1)
      .meta({ description: 'Page number, starting at 1.' }),
    limit: z
      .number({ message: 'must be an integer' })
      .int({ message: 'must be an integer' })
      .min(1, { message: 'must be at least 1' })
      .max(MAX_LIMIT, { message: `must be at most ${MAX_LIMIT}` })
      .default(defaultLimit)
      .meta({ description: `Items per page, 1..${MAX_LIMIT} (default ${defaultLimit}).` }),
  };
}

const count = z.number().int().min(0);

/** The primary pagination envelope (spec 2.5); `total` is always present as an alias of `totalItems`. */
export const Pagination = z
  .object({
    currentPage: z.number().int().min(1).meta({ example: 1 }),
    itemsPerPage: z.number().int().min(1).meta({ example: 10 }),
    totalItems: count.meta({ example: 42 }),
    total: count.meta({ description: 'Alias of totalItems.', example: 42 }),
    totalPages: count.meta({ example: 5 }),
    hasNextPage: z.boolean().meta({ example: true }),
    hasPreviousPage: z.boolean().meta({ example: false }),
  })
  .meta({ id: 'Pagination' });
export type Pagination = z.infer<typeof Pagination>;

/** The alternative envelope `{page, limit, total, totalPages}` that clients must tolerate (spec 2.5). */
export const AltPagination = z
  .object({
    page: z.number().int(),
    limit: z.number().int(),
    total: count,
    totalPages: count,
  })
  .meta({ id: 'AltPagination' });
export type AltPagination = z.infer<typeof AltPagination>;

/** Builds the primary envelope from a page request and an exact total. */
export function buildPagination(page: number, limit: number, totalItems: number): Pagination {
  const totalPages = Math.ceil(totalItems / limit);
  return {
    currentPage: page,
    itemsPerPage: limit,
    totalItems,
    total: totalItems,
    totalPages,
    hasNextPage: page < totalPages,
    hasPreviousPage: page > 1,
  };
}
