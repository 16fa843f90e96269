import { router } from '../procedures.js';
import { statsBreakdownRoute } from './breakdown.js';
import { statsRealtimeRoute } from './realtime.js';
import { statsSummaryRoute } from './summary.js';
import { statsTimeseriesRoute } from './timeseries.js';

export const statsRouter = router({
  summary: statsSummaryRoute,
  timeseries: statsTimeseriesRoute,
  breakdown: statsBreakdownRoute,
  realtime: statsRealtimeRoute,
});
