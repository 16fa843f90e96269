import { EventNamesFilter, isoDurationMs, type StatsFunnelResponse } from '@partner/shared-schemas';
import { AppError } from '../../kernel/errors.js';
import { goalRows } from '../goals/list-goals.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { statsRange } from './range.js';
import { filtersOf, principalOf, type StatsDeps, storeFor } from './reader.js';

export interface StatsFunnelParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  filters?: string | undefined;
  steps: string[];
  window: string;
}

/** Visitors through each step of a funnel of the merchant's goals, in order, within the window. */
export async function statsFunnel(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  params: StatsFunnelParams,
): Promise<StatsFunnelResponse> {
  const stats = await storeFor(deps, partner, params.merchantId);
  const goals = new Map((await goalRows(deps.db, params.merchantId)).map((goal) => [goal.id, goal]));
  const steps = params.steps.map((id) => {
    const goal = goals.get(id);
    if (!goal) throw new AppError('GOAL_NOT_FOUND', `No goal ${id} for merchant ${params.merchantId}`);
    return goal;
  });
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const scope = {
    merchantId: params.merchantId,
    start: range.start,
    end: range.end,
    names: EventNamesFilter.parse(params.events),
    filters: filtersOf(params.filters),
  };
  const reached = await stats.funnel(principalOf(partner), scope, steps, isoDurationMs(params.window) as number);
  const first = reached[0] ?? 0;
  return {
    range: { startDate: range.startDate, endDate: range.endDate, timezone: range.timezone },
    window: params.window,
    steps: steps.map((goal, i) => {
      const visitors = reached[i] ?? 0;
      const before = i === 0 ? visitors : (reached[i - 1] ?? 0);
      return {
        goalId: goal.id,
        name: goal.name,
        visitors,
        conversionRate: first === 0 ? 0 : visitors / first,
        dropOff: before === 0 ? 0 : 1 - visitors / before,
      };
    }),
  };
}
