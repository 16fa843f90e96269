// The element's DOM: built with createElement and textContent only (paths, referrers and utm
// values come from visitors' browsers: never parsed as HTML).
import type { StatsBreakdown, StatsSummary, StatsTimeseries } from '@partner/sdk';
import { change, formatCount, formatMoney, PERIODS } from './format.js';

type Child = Node | string;

export function h(tag: string, attributes: Record<string, string> = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

/** The parts the element fills in after each load. */
export interface Parts {
  root: HTMLElement;
  title: HTMLElement;
  range: HTMLElement;
  periods: HTMLElement;
  status: HTMLElement;
  kpis: HTMLElement;
  chart: HTMLElement;
  toggle: HTMLElement;
  daily: HTMLElement;
  tops: HTMLElement;
}

/** The skeleton: heading, range picker, status line, summary, chart with its table, top lists. */
export function skeleton(): Parts {
  const title = h('h2', { id: 'ptd-title', part: 'title' }, 'Statistics');
  const range = h('p', { class: 'range' });
  const periods = h(
    'div',
    { class: 'periods', role: 'group', 'aria-label': 'Period' },
    ...PERIODS.map((days) => h('button', { type: 'button', 'data-days': String(days) }, `Last ${days} days`)),
  );
  const status = h('div', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const kpis = h('ul', { class: 'kpis', 'aria-label': 'Summary' });
  const chart = h('div', { class: 'chart', 'aria-hidden': 'true' });
  const toggle = h(
    'button',
    { type: 'button', class: 'link', 'aria-expanded': 'false', 'aria-controls': 'ptd-daily' },
    'Show as table',
  );
  const daily = h('div', { class: 'table-wrap sr-only', id: 'ptd-daily' });
  const legend = h(
    'ul',
    { class: 'legend', 'aria-hidden': 'true' },
    h('li', {}, h('span', { class: 'swatch one' }), 'Visitors'),
    h('li', {}, h('span', { class: 'swatch two' }), 'Page views'),
  );
  const chartCard = h(
    'section',
    { class: 'card chart-card', 'aria-labelledby': 'ptd-chart-title' },
    h('div', { class: 'card-head' }, h('h3', { id: 'ptd-chart-title' }, 'Visitors and page views per day'), toggle),
    legend,
    chart,
    daily,
  );
  const tops = h('div', { class: 'tops' });
  const root = h(
    'section',
    { class: 'root', part: 'root', 'aria-labelledby': 'ptd-title', 'aria-busy': 'true' },
    h('div', { class: 'head' }, h('div', {}, title, range), periods),
    status,
    h('div', { class: 'body' }, kpis, chartCard, tops),
  );
  return { root, title, range, periods, status, kpis, chart, toggle, daily, tops };
}

function kpi(metric: string, label: string, value: string, delta: ReturnType<typeof change> | undefined): HTMLElement {
  return h(
    'li',
    { class: 'kpi', 'data-metric': metric },
    h('span', { class: 'kpi-label' }, label),
    h('span', { class: 'kpi-value' }, value),
    h(
      'span',
      { class: 'kpi-change', 'data-direction': delta?.direction ?? 'flat' },
      delta ? delta.text : '',
      h('span', { class: 'sr-only' }, delta ? ' compared with the previous period' : ''),
    ),
  );
}

/** Visitors, page views, purchases and revenue (one per currency), each with its change. */
export function summaryItems(summary: StatsSummary): HTMLElement[] {
  const { totals, previous } = summary;
  const counted = [
    ['visitors', 'Visitors'],
    ['pageviews', 'Page views'],
    ['purchases', 'Purchases'],
  ] as const;
  const items = counted.map(([metric, label]) =>
    kpi(
      metric,
      label,
      formatCount(totals[metric]),
      previous ? change(totals[metric], previous.totals[metric]) : undefined,
    ),
  );
  const currencies = new Set([...totals.revenue, ...(previous?.totals.revenue ?? [])].map((r) => r.currency));
  if (currencies.size === 0) items.push(kpi('revenue', 'Revenue', formatCount(0), previous ? change(0, 0) : undefined));
  for (const currency of [...currencies].sort()) {
    const amount = totals.revenue.find((r) => r.currency === currency)?.amount ?? '0';
    const before = previous?.totals.revenue.find((r) => r.currency === currency)?.amount ?? '0';
    items.push(
      kpi(
        `revenue-${currency}`,
        `Revenue (${currency})`,
        formatMoney(amount, currency),
        previous ? change(Number(amount), Number(before)) : undefined,
      ),
    );
  }
  return items;
}

function table(caption: string, head: string[], rows: string[][]): HTMLElement {
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...head.map((cell) => h('th', { scope: 'col' }, cell)))),
    h(
      'tbody',
      {},
      ...rows.map(([first, ...rest]) =>
        h('tr', {}, h('th', { scope: 'row' }, first ?? ''), ...rest.map((cell) => h('td', {}, cell))),
      ),
    ),
  );
}

/** The chart's numbers: one row a day. */
export function dailyTable(series: StatsTimeseries): HTMLElement {
  return table(
    'Daily numbers',
    ['Day', 'Visitors', 'Page views', 'Purchases', 'Events'],
    series.points.map((p) => [
      p.start.slice(0, 10),
      formatCount(p.visitors),
      formatCount(p.pageviews),
      formatCount(p.purchases),
      formatCount(p.events),
    ]),
  );
}

/** A top list with the rest as `other` when the API has one. */
export function topTable(caption: string, valueHeading: string, breakdown: StatsBreakdown): HTMLElement {
  const rows = [...breakdown.rows, ...(breakdown.other ? [breakdown.other] : [])];
  const card = h(
    'section',
    { class: 'card' },
    table(
      caption,
      [valueHeading, 'Visitors', 'Events'],
      rows.map((r) => [r.value, formatCount(r.visitors), formatCount(r.events)]),
    ),
  );
  if (rows.length === 0) card.append(h('p', { class: 'note' }, 'Nothing in this period.'));
  return card;
}
