import {
  buildPagination,
  EVENT_NAME_MAX,
  type ListEventsResponse,
  parseDateBound,
  parseEventNames,
} from '@partner/shared-schemas';
import { and, asc, count, desc, eq, gte, inArray, lte, type SQL } from 'drizzle-orm';
import type { AuthenticatedPartner } from '../../auth/authenticate.js';
import type { Database } from '../../db/client.js';
import { events, tags } from '../../db/schema/index.js';
import { AppError } from '../../errors.js';
import { findOwnMerchant } from '../merchant/find-merchant.js';

export const MAX_EVENT_NAME_FILTERS = 50;

export interface ListEventsParams {
  merchantId: string;
  page: number;
  limit: number;
  sortOrder: 'asc' | 'desc';
  sortBy: 'event_time' | 'event_name';
  events?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
}

function filters(params: ListEventsParams): SQL[] {
  const names = parseEventNames(params.events);
  if (names.length > MAX_EVENT_NAME_FILTERS) {
    throw new AppError('VALIDATION_ERROR', `events: at most ${MAX_EVENT_NAME_FILTERS} event names`);
  }
  const tooLong = names.find((name) => name.length > EVENT_NAME_MAX);
  if (tooLong) throw new AppError('VALIDATION_ERROR', `events: names are at most ${EVENT_NAME_MAX} characters`);
  const start = params.startDate ? parseDateBound(params.startDate, 'start') : null;
  const end = params.endDate ? parseDateBound(params.endDate, 'end') : null;
  if (start && end && start > end) {
    throw new AppError('VALIDATION_ERROR', 'startDate must not be after endDate');
  }
  const where: SQL[] = [eq(events.merchantId, params.merchantId)];
  if (names.length > 0) where.push(inArray(events.eventName, names));
  if (start) where.push(gte(events.eventTime, start));
  if (end) where.push(lte(events.eventTime, end));
  return where;
}

/**
 * One page of a merchant's events. The order always ends in the event id, so rows that share a
 * time (or a name) keep one order and pages never skip or repeat.
 */
export async function listEvents(
  db: Database,
  partner: AuthenticatedPartner,
  params: ListEventsParams,
): Promise<ListEventsResponse> {
  const where = and(...filters(params));
  await findOwnMerchant(db, partner, params.merchantId);
  const [integration] = await db
    .select({ id: tags.id })
    .from(tags)
    .where(eq(tags.merchantId, params.merchantId))
    .limit(1);
  if (!integration) {
    throw new AppError('MERCHANT_NOT_FOUND', `Merchant ${params.merchantId} has no tag integration yet`);
  }
  const dir = params.sortOrder === 'asc' ? asc : desc;
  const order =
    params.sortBy === 'event_name'
      ? [dir(events.eventName), dir(events.eventTime), dir(events.id)]
      : [dir(events.eventTime), dir(events.id)];
  const [rows, totals] = await Promise.all([
    db
      .select({
        id: events.id,
        muid: events.muid,
        eventName: events.eventName,
        eventTime: events.eventTime,
        rawData: events.rawData,
      })
      .from(events)
      .where(where)
      .orderBy(...order)
      .limit(params.limit)
      .offset((params.page - 1) * params.limit),
    db.select({ total: count() }).from(events).where(where),
  ]);
  return {
    events: rows.map((row) => ({
      id: row.id,
      muid: row.muid,
      event_name: row.eventName,
      event_time: row.eventTime.toISOString(),
      raw_data: row.rawData,
    })),
    pagination: buildPagination(params.page, params.limit, totals[0]?.total ?? 0),
  };
}
