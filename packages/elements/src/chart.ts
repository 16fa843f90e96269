// The daily chart: uPlot on a canvas, colored from the element's custom properties. The canvas is
// hidden from assistive technology; the same numbers are in the "Daily numbers" table.
import type { StatsTimeseries } from '@partner/sdk';
import uPlot from 'uplot';

export interface ChartColors {
  text: string;
  muted: string;
  grid: string;
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
): uPlot {
  container.replaceChildren();
  const x = series.points.map((p) => Date.parse(p.start) / 1000);
  const axis = {
    stroke: colors.muted,
    font: `12px ${colors.font}`,
    grid: { stroke: colors.grid, width: 1 },
    ticks: { stroke: colors.grid, width: 1 },
  };
  const line = (label: string, stroke: string) => ({
    label,
    stroke,
    width: 2,
    points: { show: series.points.length <= 31, size: 5, fill: stroke },
  });
  const options: uPlot.Options = {
    width: Math.max(280, container.clientWidth),
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timeZone),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] } },
    axes: [{ ...axis }, { ...axis, size: 48 }],
    series: [{}, line('Visitors', colors.series[0]), line('Page views', colors.series[1])],
  };
  return new uPlot(
    options,
    [x, series.points.map((p) => p.visitors), series.points.map((p) => p.pageviews)],
    container,
  );
}
