// The element's styles, in its shadow root. Every color, the font and the corner radius come from
// custom properties a page may set on the element (--ptd-color-*, --ptd-font, --ptd-radius).
const LIGHT = `
  --ptd-color-bg: #ffffff;
  --ptd-color-surface: #f6f7f9;
  --ptd-color-text: #1c2330;
  --ptd-color-muted: #545d6b;
  --ptd-color-border: #dfe3e8;
  --ptd-color-accent: #2563eb;
  --ptd-color-on-accent: #ffffff;
  --ptd-color-series-2: #c2410c;
  --ptd-color-up: #047857;
  --ptd-color-down: #b42318;
  --ptd-color-focus: #1d4ed8;
`;
const DARK = `
  --ptd-color-bg: #111827;
  --ptd-color-surface: #1b2433;
  --ptd-color-text: #f3f4f6;
  --ptd-color-muted: #a9b3c1;
  --ptd-color-border: #334155;
  --ptd-color-accent: #60a5fa;
  --ptd-color-on-accent: #0b1220;
  --ptd-color-series-2: #fb923c;
  --ptd-color-up: #34d399;
  --ptd-color-down: #fca5a5;
  --ptd-color-focus: #93c5fd;
`;

/** uPlot's own rules this element needs (its stylesheet does not reach into a shadow root). */
const UPLOT = `
.uplot, .uplot * { box-sizing: border-box; }
.uplot { width: min-content; }
.u-wrap { position: relative; user-select: none; }
.u-over, .u-under { position: absolute; }
.u-under { overflow: hidden; }
.uplot canvas { display: block; position: relative; width: 100%; height: 100%; }
.u-axis { position: absolute; }
.u-select { background: rgba(127, 127, 127, 0.12); position: absolute; pointer-events: none; }
.u-cursor-x, .u-cursor-y { position: absolute; left: 0; top: 0; pointer-events: none; will-change: transform; }
.u-hz .u-cursor-x { height: 100%; border-right: 1px dashed var(--ptd-color-muted); }
.u-hz .u-cursor-y { width: 100%; border-bottom: 1px dashed var(--ptd-color-muted); }
.u-cursor-pt { position: absolute; top: 0; left: 0; border-radius: 50%; border: 0 solid; pointer-events: none;
  will-change: transform; background-clip: padding-box !important; }
.u-axis.u-off, .u-select.u-off, .u-cursor-x.u-off, .u-cursor-y.u-off, .u-cursor-pt.u-off { display: none; }
`;

export const STYLES = `
:host {
  ${LIGHT}
  --ptd-font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --ptd-radius: 10px;
  display: block;
  color-scheme: light;
  font-family: var(--ptd-font);
  color: var(--ptd-color-text);
  background: var(--ptd-color-bg);
  line-height: 1.45;
  container-type: inline-size;
}
@media (prefers-color-scheme: dark) {
  :host(:not([theme="light"])) { ${DARK} color-scheme: dark; }
}
:host([theme="dark"]) { ${DARK} color-scheme: dark; }
:host([hidden]), [hidden] { display: none !important; }
* { box-sizing: border-box; }
.root { padding: 20px; }
.head { display: flex; flex-wrap: wrap; gap: 12px 24px; align-items: flex-end; justify-content: space-between;
  margin-bottom: 16px; }
h2 { margin: 0; font-size: 1.25rem; line-height: 1.3; }
h3 { margin: 0; font-size: 0.95rem; }
.range, .note { margin: 2px 0 0; color: var(--ptd-color-muted); font-size: 0.875rem; }
.periods { display: inline-flex; border: 1px solid var(--ptd-color-border); border-radius: var(--ptd-radius);
  overflow: hidden; background: var(--ptd-color-surface); }
button { font: inherit; font-size: 0.875rem; color: var(--ptd-color-text); cursor: pointer; }
.periods button { border: 0; background: transparent; padding: 6px 12px; }
.periods button + button { border-left: 1px solid var(--ptd-color-border); }
.periods button[aria-pressed="true"] { background: var(--ptd-color-accent); color: var(--ptd-color-on-accent);
  font-weight: 600; }
button:focus-visible { outline: 3px solid var(--ptd-color-focus); outline-offset: -3px; }
.link { border: 1px solid var(--ptd-color-border); border-radius: calc(var(--ptd-radius) * 0.6);
  background: var(--ptd-color-bg); padding: 4px 10px; }
.now { margin: 6px 0 0; font-size: 0.875rem; color: var(--ptd-color-muted); }
.now-dot { display: inline-block; width: 8px; height: 8px; border-radius: 50%; margin-right: 6px;
  background: var(--ptd-color-up); vertical-align: middle; }
.now-value { color: var(--ptd-color-text); font-weight: 700; font-variant-numeric: tabular-nums; }
.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 0 0 16px; font-size: 0.875rem; }
.filters-label { color: var(--ptd-color-muted); }
.chip { border: 1px solid var(--ptd-color-border); border-radius: 999px; background: var(--ptd-color-surface);
  padding: 4px 12px; }
.chip-x { margin-left: 8px; font-weight: 700; }
.chip:hover { border-color: var(--ptd-color-accent); }
.pick { border: 0; background: none; padding: 0; font-size: inherit; font-weight: inherit; text-align: left;
  overflow-wrap: anywhere; }
tbody tr:has(.pick) { cursor: pointer; }
tbody tr:has(.pick):hover { background: var(--ptd-color-bg); }
tbody tr:has(.pick):hover .pick { text-decoration: underline; }
.pick:focus-visible, .chip:focus-visible, h2:focus-visible { outline: 3px solid var(--ptd-color-focus);
  outline-offset: 2px; }
.hint { grid-column: 1 / -1; margin: 0 0 8px; }
.so-far { color: var(--ptd-color-muted); font-style: italic; }
.kpi[data-better="down"] .kpi-change[data-direction="up"] { color: var(--ptd-color-down); }
.kpi[data-better="down"] .kpi-change[data-direction="down"] { color: var(--ptd-color-up); }
.status { margin: 0 0 16px; padding: 12px 14px; border-radius: var(--ptd-radius); background: var(--ptd-color-surface);
  border: 1px solid var(--ptd-color-border); display: flex; gap: 12px; align-items: center; flex-wrap: wrap; }
.status:empty { display: none; }
.status[data-kind="error"] { border-color: var(--ptd-color-down); }
.kpis { list-style: none; margin: 0 0 16px; padding: 0; display: grid; gap: 12px;
  grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); }
.kpi, .card { background: var(--ptd-color-surface); border: 1px solid var(--ptd-color-border);
  border-radius: var(--ptd-radius); }
.kpi { padding: 14px 16px; }
.kpi-label { display: block; font-size: 0.8rem; color: var(--ptd-color-muted); font-weight: 600;
  text-transform: uppercase; letter-spacing: 0.04em; }
.kpi-value { display: block; font-size: 1.6rem; font-weight: 700; font-variant-numeric: tabular-nums; }
.kpi-change { display: block; font-size: 0.85rem; color: var(--ptd-color-muted); }
.kpi-change[data-direction="up"] { color: var(--ptd-color-up); }
.kpi-change[data-direction="down"] { color: var(--ptd-color-down); }
.card { padding: 14px 16px; margin-bottom: 16px; min-width: 0; }
.card-head { display: flex; justify-content: space-between; align-items: center; gap: 12px; margin-bottom: 8px; }
.legend { display: flex; gap: 16px; font-size: 0.85rem; color: var(--ptd-color-muted); margin: 0 0 6px; padding: 0;
  list-style: none; }
.swatch { display: inline-block; width: 12px; height: 3px; border-radius: 2px; vertical-align: middle;
  margin-right: 6px; }
.swatch.one { background: var(--ptd-color-accent); }
.swatch.two { background: var(--ptd-color-series-2); }
.swatch.dashed { width: 18px; height: 0; border-top: 2px dashed var(--ptd-color-muted); border-radius: 0; }
.chart { min-height: 240px; }
.tops { display: grid; gap: 0 16px; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); }
table { width: 100%; border-collapse: collapse; font-size: 0.875rem; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 700; font-size: 0.95rem; padding-bottom: 6px; }
th, td { padding: 5px 6px; border-bottom: 1px solid var(--ptd-color-border); text-align: right; }
th:first-child, td:first-child { text-align: left; overflow-wrap: anywhere; }
tbody th { font-weight: 500; }
thead th { color: var(--ptd-color-muted); font-weight: 600; font-size: 0.8rem; }
tbody tr:last-child td, tbody tr:last-child th { border-bottom: 0; }
.table-wrap { max-height: 320px; overflow: auto; margin-top: 8px; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.empty .chart-card, .empty .tops, .empty [data-card], .failed .body { display: none; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; }
.link[aria-disabled="true"] { opacity: 0.6; cursor: progress; }
.foot { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; justify-content: space-between;
  margin: 8px 0 0; }
.foot .note { margin: 0; }
.foot .link { margin-left: auto; }
.funnel { list-style: none; margin: 8px 0 0; padding: 0; font-size: 0.875rem; }
.step { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 4px 12px; }
.step-name { font-weight: 600; overflow-wrap: anywhere; }
.step-value { font-variant-numeric: tabular-nums; color: var(--ptd-color-muted); }
.track { grid-column: 1 / -1; height: 12px; border-radius: calc(var(--ptd-radius) * 0.4);
  background: var(--ptd-color-bg); border: 1px solid var(--ptd-color-border); overflow: hidden; }
.bar { display: block; height: 100%; background: var(--ptd-color-accent); }
.drop { margin: 6px 0 6px 12px; color: var(--ptd-color-down); font-size: 0.8rem; }
${UPLOT}
`;
