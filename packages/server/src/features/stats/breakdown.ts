import { EventNamesFilter, type STATS_DIMENSIONS, type StatsBreakdownResponse } from '@partner/shared-schemas';
import { AppError } from '../../kernel/errors.js';
import { goalRows } from '../goals/list-goals.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { OTHER, type RowConversions } from './goal-rows.js';
import { statsRange } from './range.js';
import { filtersOf, principalOf, type StatsDeps, storeFor } from './reader.js';

export interface StatsBreakdownParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  filters?: string | undefined;
  dimension: (typeof STATS_DIMENSIONS)[number];
  limit: number;
  goal?: string | undefined;
}

/** Events and visitors per value of a dimension, largest first, the values past `limit` summed into `other`. */
export async function statsBreakdown(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  params: StatsBreakdownParams,
): Promise<StatsBreakdownResponse> {
  const names = EventNamesFilter.parse(params.events);
  const stats = await storeFor(deps, partner, params.merchantId);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const goal = params.goal ? await goalOf(deps, params.merchantId, params.goal) : undefined;
  const query = {
    merchantId: params.merchantId,
    start: range.start,
    end: range.end,
    names,
    filters: filtersOf(params.filters),
    dimension: params.dimension,
    limit: params.limit,
  };
  const principal = principalOf(partner);
  const top = await stats.topValues(principal, query);
  const { rows, other } = goal
    ? withConversions(
        top,
        await stats.goalRows(
          principal,
          query,
          goal,
          top.rows.map((row) => row.value),
        ),
      )
    : top;
  return {
    range: { startDate: range.startDate, endDate: range.endDate, timezone: range.timezone },
    dimension: params.dimension,
    rows,
    other,
  };
}

async function goalOf(deps: StatsDeps, merchantId: string, goalId: string) {
  const goal = (await goalRows(deps.db, merchantId)).find((row) => row.id === goalId.toLowerCase());
  if (!goal) throw new AppError('GOAL_NOT_FOUND', `No goal ${goalId} for merchant ${merchantId}`);
  return goal;
}

type Row = StatsBreakdownResponse['rows'][number];

/** The rows with the goal's conversions; a rate over the row's visitors (at most 1: a visitor may convert off page views). */
function withConversions(top: { rows: Row[]; other: Row | null }, conversions: RowConversions) {
  const add = (row: Row, key: string): Row => {
    const found = conversions.get(key) ?? { conversions: 0, visitors: 0 };
    const rate = row.visitors === 0 ? (found.visitors > 0 ? 1 : 0) : Math.min(1, found.visitors / row.visitors);
    return { ...row, conversions: found.conversions, conversionRate: rate };
  };
  return { rows: top.rows.map((row) => add(row, row.value)), other: top.other ? add(top.other, OTHER) : null };
}
