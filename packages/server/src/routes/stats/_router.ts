import { router } from '../procedures.js';
import { statsAttributionRoute } from './attribution.js';
import { statsBreakdownRoute } from './breakdown.js';
import { statsFunnelRoute } from './funnel.js';
import { statsRealtimeRoute } from './realtime.js';
import { statsSummaryRoute } from './summary.js';
import { statsTimeseriesRoute } from './timeseries.js';

export const statsRouter = router({
  summary: statsSummaryRoute,
  timeseries: statsTimeseriesRoute,
  breakdown: statsBreakdownRoute,
  realtime: statsRealtimeRoute,
  funnel: statsFunnelRoute,
  attribution: statsAttributionRoute,
});
