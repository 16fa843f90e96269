import type { IncomingMessage } from 'node:http';
import type {
  StatsAttributionResponse,
  StatsBreakdownResponse,
  StatsFunnelResponse,
  StatsTimeseriesResponse,
} from '@partner/shared-schemas';

/** The statistics that answer CSV when asked, by route. */
const CSV_ROUTES = {
  '/v1/partners/stats/timeseries': 'timeseries',
  '/v1/partners/stats/breakdown': 'breakdown',
  '/v1/partners/stats/funnel': 'funnel',
  '/v1/partners/stats/attribution': 'attribution',
} as const;
export type CsvKind = (typeof CSV_ROUTES)[keyof typeof CSV_ROUTES];

/** The CSV the request asks for (`format=csv`, or `text/csv` first in Accept), else null. */
export function csvAsked(req: IncomingMessage, route: string): CsvKind | null {
  const kind = CSV_ROUTES[route as keyof typeof CSV_ROUTES];
  if (!kind || req.method !== 'GET') return null;
  const format = new URL(req.url ?? '/', 'http://x').searchParams.get('format');
  if (format !== null) return format === 'csv' ? kind : null;
  const first = req.headers.accept?.split(',')[0]?.split(';')[0]?.trim().toLowerCase();
  return first === 'text/csv' ? kind : null;
}

type Cell = string | number;

/**
 * One field, RFC 4180: quoted when it holds a quote, comma or line break. Text that a spreadsheet would run as a
 * formula is prefixed with `'`.
 */
function field(cell: Cell): string {
  if (typeof cell === 'number') return String(cell);
  const safe = /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

const table = (header: string[], rows: Cell[][]) =>
  `${[header, ...rows].map((row) => row.map(field).join(',')).join('\r\n')}\r\n`;

type Revenue = { currency: string; amount: string }[];

/** One column per currency present anywhere (`revenue_EUR`...), in currency order. */
function revenueColumns(all: Revenue[]): { header: string[]; cells: (revenue: Revenue) => Cell[] } {
  const currencies = [...new Set(all.flatMap((r) => r.map((x) => x.currency)))].sort();
  return {
    header: currencies.map((c) => `revenue_${c}`),
    cells: (revenue) => currencies.map((c) => revenue.find((x) => x.currency === c)?.amount ?? '0'),
  };
}

/** The answer of `kind` (its JSON, as the API gives it) as CSV with a header row. */
export function statsCsv(kind: CsvKind, answer: unknown): string {
  switch (kind) {
    case 'timeseries': {
      const { points } = answer as StatsTimeseriesResponse;
      const revenue = revenueColumns(points.map((p) => p.revenue));
      return table(
        [
          'start',
          'events',
          'visitors',
          'pageviews',
          'purchases',
          ...revenue.header,
          'visits',
          'bounce_rate',
          'visit_duration',
          'views_per_visit',
        ],
        points.map((p) => [
          p.start,
          p.events,
          p.visitors,
          p.pageviews,
          p.purchases,
          ...revenue.cells(p.revenue),
          p.visits,
          p.bounceRate,
          p.visitDuration,
          p.viewsPerVisit,
        ]),
      );
    }
    case 'breakdown': {
      const { rows, other } = answer as StatsBreakdownResponse;
      const all = other ? [...rows, other] : rows;
      const goal = all.some((row) => row.conversions !== undefined);
      return table(
        ['value', 'events', 'visitors', 'visits', ...(goal ? ['conversions', 'conversion_rate'] : [])],
        all.map((row) => [
          row.value,
          row.events,
          row.visitors,
          row.visits,
          ...(goal ? [row.conversions ?? 0, row.conversionRate ?? 0] : []),
        ]),
      );
    }
    case 'funnel': {
      const { steps } = answer as StatsFunnelResponse;
      return table(
        ['step', 'goal_id', 'name', 'visitors', 'conversion_rate', 'drop_off'],
        steps.map((s, i) => [i + 1, s.goalId, s.name, s.visitors, s.conversionRate, s.dropOff]),
      );
    }
    case 'attribution': {
      const { rows } = answer as StatsAttributionResponse;
      const revenue = revenueColumns(rows.map((r) => r.revenue));
      return table(
        ['value', 'visitors', 'purchases', ...revenue.header],
        rows.map((r) => [r.value, r.visitors, r.purchases, ...revenue.cells(r.revenue)]),
      );
    }
  }
}
