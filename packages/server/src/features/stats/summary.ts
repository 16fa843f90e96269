import { EventNamesFilter, type StatsSummaryResponse } from '@partner/shared-schemas';
import { goalRows } from '../goals/list-goals.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import type { GoalSums } from './goal-totals.js';
import { noPoint, pointTotals } from './points.js';
import { previousRange, type StatsRange, statsRange } from './range.js';
import { filtersOf, principalOf, type StatsDeps, storeFor } from './reader.js';

export interface StatsSummaryParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  filters?: string | undefined;
  compare?: 'previous' | undefined;
}

const rangeOf = (r: StatsRange) => ({ startDate: r.startDate, endDate: r.endDate, timezone: r.timezone });

/** A merchant's totals over a range of local dates (and, asked, over the period before it): one read of both. */
export async function statsSummary(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  params: StatsSummaryParams,
): Promise<StatsSummaryResponse> {
  const names = EventNamesFilter.parse(params.events);
  const stats = await storeFor(deps, partner, params.merchantId);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const before = params.compare === 'previous' ? previousRange(range) : null;
  const scope = {
    merchantId: params.merchantId,
    start: before?.start ?? range.start,
    end: range.end,
    names,
    filters: filtersOf(params.filters),
  };
  const goals = await goalRows(deps.db, params.merchantId);
  const principal = principalOf(partner);
  const [points, bots, conversions] = await Promise.all([
    stats.points(principal, { ...scope, cut: { splitAt: range.start } }, [range.start]),
    stats.botEvents(scope.merchantId, scope.start, range.start, range.end),
    stats.goalTotals(principal, scope, range.start, goals),
  ]);
  const totalsOf = (key: string, botEvents: number) => {
    const totals = pointTotals(points.get(key) ?? noPoint());
    return { ...totals, botEvents, goals: goalsOf(goals, conversions, key, totals.visitors) };
  };
  return {
    range: rangeOf(range),
    totals: totalsOf('1', bots.current),
    previous: before ? { range: rangeOf(before), totals: totalsOf('0', bots.before) } : null,
  };
}

/** Each goal's totals of one period; its rate over the period's visitors. */
function goalsOf(goals: readonly { id: string; name: string }[], sums: GoalSums, key: string, visitors: number) {
  const period = sums.get(key);
  return goals.map((goal, i) => {
    const converted = period?.visitors[i] ?? 0;
    return {
      goalId: goal.id,
      name: goal.name,
      conversions: period?.conversions[i] ?? 0,
      visitors: converted,
      conversionRate: visitors === 0 ? 0 : Math.min(1, converted / visitors),
    };
  });
}
