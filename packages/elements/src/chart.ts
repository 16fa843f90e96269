// The daily chart: uPlot on a canvas, colored from the element's custom properties. The canvas is
// hidden from assistive technology; the same numbers are in the "Daily numbers" table. The point
// of the interval not over yet (today) is drawn apart: dashed from the point before, hollow, with
// "so far" above it, so that a day still counting does not read as a drop.
import type { StatsTimeseries } from '@partner/sdk';
import uPlot from 'uplot';

export interface ChartColors {
  text: string;
  muted: string;
  grid: string;
  surface: string;
  series: [string, string];
  font: string;
}

/** The theme's colors as the element currently resolves them. */
export function chartColors(host: HTMLElement): ChartColors {
  const style = getComputedStyle(host);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: read('--ptd-color-text', '#1c2330'),
    muted: read('--ptd-color-muted', '#545d6b'),
    grid: read('--ptd-color-border', '#dfe3e8'),
    surface: read('--ptd-color-surface', '#f6f7f9'),
    series: [read('--ptd-color-accent', '#2563eb'), read('--ptd-color-series-2', '#c2410c')],
    font: read('--ptd-font', 'system-ui, sans-serif'),
  };
}

const HEIGHT = 240;

/** Draws visitors and page views per day into `container` (emptied first); returns the chart. */
export function drawChart(
  container: HTMLElement,
  series: StatsTimeseries,
  colors: ChartColors,
  timeZone: string,
  current: number,
): uPlot {
  container.replaceChildren();
  const x = series.points.map((p) => Date.parse(p.start) / 1000);
  const axis = {
    stroke: colors.muted,
    font: `12px ${colors.font}`,
    grid: { stroke: colors.grid, width: 1 },
    ticks: { stroke: colors.grid, width: 1 },
  };
  const few = series.points.length <= 31;
  const line = (label: string, stroke: string) => ({
    label,
    stroke,
    width: 2,
    points: { show: few, size: 5, fill: stroke },
  });
  const soFar = (label: string, stroke: string) => ({
    label: `${label} so far`,
    stroke,
    width: 2,
    dash: [5, 4],
    points: { show: true, size: 7, width: 2, fill: colors.surface },
  });
  // Done points in the full lines; the current one (and the one before, to join it) dashed.
  const split = (values: number[]) => [
    values.map((v, i) => (i === current ? null : v)),
    values.map((v, i) => (current >= 0 && (i === current || i === current - 1) ? v : null)),
  ];
  const [visitors, visitorsSoFar] = split(series.points.map((p) => p.visitors));
  const [pageviews, pageviewsSoFar] = split(series.points.map((p) => p.pageviews));
  const label = (u: uPlot) => {
    if (current < 0) return;
    const ratio = uPlot.pxRatio;
    const { ctx, bbox } = u;
    const left = u.valToPos(x[current] as number, 'x', true);
    const top = Math.min(
      u.valToPos(series.points[current]?.visitors ?? 0, 'y', true),
      u.valToPos(series.points[current]?.pageviews ?? 0, 'y', true),
    );
    ctx.save();
    // uPlot's axes leave their own alignment on the context.
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    ctx.font = `${12 * ratio}px ${colors.font}`;
    // Right-aligned at the right edge, centred elsewhere; on the surface's color over the lines.
    const width = ctx.measureText('so far').width;
    const right = left > bbox.left + bbox.width - 30 * ratio;
    const start = right ? left - width : left - width / 2;
    const baseline = Math.max(bbox.top + 14 * ratio, top - 10 * ratio);
    ctx.fillStyle = colors.surface;
    ctx.fillRect(start - 3 * ratio, baseline - 12 * ratio, width + 6 * ratio, 16 * ratio);
    ctx.fillStyle = colors.text;
    ctx.fillText('so far', start, baseline);
    ctx.restore();
  };
  const options: uPlot.Options = {
    width: Math.max(280, container.clientWidth),
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timeZone),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] } },
    axes: [{ ...axis }, { ...axis, size: 48 }],
    series: [
      {},
      line('Visitors', colors.series[0]),
      line('Page views', colors.series[1]),
      ...(current < 0 ? [] : [soFar('Visitors', colors.series[0]), soFar('Page views', colors.series[1])]),
    ],
    hooks: { draw: [label] },
  };
  const data = [x, visitors, pageviews, ...(current < 0 ? [] : [visitorsSoFar, pageviewsSoFar])];
  return new uPlot(options, data as uPlot.AlignedData, container);
}
