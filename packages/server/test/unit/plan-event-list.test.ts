// planEventList (features/events/read/list-events.ts) without a database: filter validation, cursors
// bound to their list, and the statements' parameters.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  eventListQueries,
  eventListResponse,
  type ListEventsParams,
  planEventList,
} from '../../src/features/events/read/list-events.js';
import { errorResponse, toAppError } from '../../src/kernel/errors.js';

const KEY = randomBytes(32);
const PARTNER = '00000000-0000-4000-8000-000000000001';
const MERCHANT = '00000000-0000-4000-8000-000000000002';
const params = (extra: Partial<ListEventsParams> = {}): ListEventsParams => ({
  merchantId: MERCHANT,
  page: 1,
  limit: 2,
  sortOrder: 'desc',
  sortBy: 'event_time',
  ...extra,
});

function failure(call: () => unknown): { status: number; code: string; message: string } {
  try {
    call();
  } catch (error) {
    const { status, body } = errorResponse(toAppError(error));
    return { status, code: body.code, message: body.message };
  }
  throw new Error('expected a failure');
}

describe('planEventList', () => {
  it('binds the plan to the partner, merchant, sort and filters; the page comes from params', () => {
    const plan = planEventList(PARTNER, params({ page: 3, events: 'a,b', startDate: '2026-01-01' }), KEY);
    expect(plan.page).toBe(3);
    expect(plan.binding).toMatchObject({
      partnerId: PARTNER,
      merchantId: MERCHANT,
      sortBy: 'event_time',
      names: ['a', 'b'],
    });
    expect(plan.binding.start?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    const { data, count } = eventListQueries(PARTNER, params({ events: 'a,b' }), KEY);
    expect(data.params).toEqual(expect.arrayContaining([PARTNER, MERCHANT]));
    expect(count.params).toEqual(expect.arrayContaining([PARTNER, MERCHANT]));
  });

  it('refuses a start after the end and a malformed events filter with 400 VALIDATION_ERROR', () => {
    expect(
      failure(() => planEventList(PARTNER, params({ startDate: '2026-02-01', endDate: '2026-01-01' }), KEY)),
    ).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      message: 'startDate must not be after endDate',
    });
    const tooMany = Array.from({ length: 51 }, (_, i) => `e${i}`).join(',');
    expect(failure(() => planEventList(PARTNER, params({ events: tooMany }), KEY))).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
    });
  });

  it('a nextCursor opens the next page of the same list only (400 for another partner, sort or filter, or key)', () => {
    const plan = planEventList(PARTNER, params(), KEY);
    const rows = [0, 1, 2].map((i) => ({
      id: `id-${i}`,
      muid: 'm',
      event_name: 'view',
      event_time: `2026-01-0${3 - i}T00:00:00.000Z`,
      raw_data: {},
    }));
    const page = eventListResponse(plan, 2, rows, 10, KEY);
    expect(page.events.map((e) => e.id)).toEqual(['id-0', 'id-1']);
    const cursor = page.pagination.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    expect(planEventList(PARTNER, params({ cursor }), KEY).page).toBe(2);
    const other = '00000000-0000-4000-8000-000000000009';
    for (const call of [
      () => planEventList(other, params({ cursor }), KEY),
      () => planEventList(PARTNER, params({ cursor, sortOrder: 'asc' }), KEY),
      () => planEventList(PARTNER, params({ cursor, events: 'view' }), KEY),
      () => planEventList(PARTNER, params({ cursor }), randomBytes(32)),
    ]) {
      expect(failure(call)).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    }
  });
});
