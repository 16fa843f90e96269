// The element's DOM: built with createElement and textContent only (paths, referrers and utm
// values come from visitors' browsers: never parsed as HTML).
import type { StatsBreakdown, StatsDimension, StatsRealtime, StatsSummary, StatsTimeseries } from '@partner/sdk';
import { describeFilter, displayValue, type Filter } from './filters.js';
import { change, formatCount, formatDuration, formatMoney, formatShare, PERIODS, pointsChange } from './format.js';

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
  now: HTMLElement;
  periods: HTMLElement;
  filters: HTMLElement;
  status: HTMLElement;
  kpis: HTMLElement;
  chart: HTMLElement;
  toggle: HTMLElement;
  daily: HTMLElement;
  soFarKey: HTMLElement;
  tops: HTMLElement;
}

/** The skeleton: heading, visitors now, range picker, filters, status line, summary, chart with its table, top lists. */
export function skeleton(): Parts {
  // Focus lands on the heading when the last filter is removed.
  const title = h('h2', { id: 'ptd-title', part: 'title', tabindex: '-1' }, 'Statistics');
  const range = h('p', { class: 'range' });
  const now = h('p', { class: 'now', part: 'now', 'data-metric': 'now', hidden: '' });
  const filters = h('div', { class: 'filters', part: 'filters', role: 'group', 'aria-label': 'Filters', hidden: '' });
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
  const soFarKey = h('li', { hidden: '' }, h('span', { class: 'swatch dashed' }), 'Today, not over yet');
  legend.append(soFarKey);
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
    h('div', { class: 'head' }, h('div', {}, title, range, now), periods),
    filters,
    status,
    h('div', { class: 'body' }, kpis, chartCard, tops),
  );
  return { root, title, range, now, periods, filters, status, kpis, chart, toggle, daily, soFarKey, tops };
}

/** "3 visitors now": the realtime answer, whatever the filters (the API takes none for it). */
export function nowItems(realtime: StatsRealtime): Child[] {
  return [
    h('span', { class: 'now-dot', 'aria-hidden': 'true' }),
    h('span', { class: 'now-value' }, formatCount(realtime.visitors)),
    ` ${realtime.visitors === 1 ? 'visitor' : 'visitors'} now `,
    h('span', { class: 'now-note' }, '(last 5 minutes, whole site)'),
  ];
}

/** One button a filter: it removes the filter. Then "Clear filters" when there are several. */
export function filterItems(filters: readonly Filter[]): HTMLElement[] {
  if (filters.length === 0) return [];
  const items = [
    h('span', { class: 'filters-label' }, 'Showing only:'),
    ...filters.map((filter) => {
      const text = describeFilter(filter);
      return h(
        'button',
        {
          type: 'button',
          class: 'chip',
          part: 'filter',
          'data-dimension': filter.dimension,
          'aria-label': `Remove filter: ${text}`,
        },
        text,
        h('span', { class: 'chip-x', 'aria-hidden': 'true' }, '×'),
      );
    }),
  ];
  if (filters.length > 1) items.push(h('button', { type: 'button', class: 'link', 'data-clear': '' }, 'Clear filters'));
  return items;
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

/**
 * Visitors, visits, page views, bounce rate, visit duration, purchases and revenue (one per
 * currency), each with its change against the previous period.
 */
export function summaryItems(summary: StatsSummary): HTMLElement[] {
  const { totals } = summary;
  const previous = summary.previous?.totals;
  const counted = (metric: 'visitors' | 'visits' | 'pageviews', label: string) =>
    kpi(metric, label, formatCount(totals[metric]), previous && change(totals[metric], previous[metric]));
  const items = [
    counted('visitors', 'Visitors'),
    counted('visits', 'Visits'),
    counted('pageviews', 'Page views'),
    kpi(
      'bounceRate',
      'Bounce rate',
      formatShare(totals.bounceRate),
      previous && pointsChange(totals.bounceRate, previous.bounceRate, [totals.visits > 0, previous.visits > 0]),
    ),
    kpi(
      'visitDuration',
      'Visit duration',
      formatDuration(totals.visitDuration),
      previous && change(totals.visitDuration, previous.visitDuration),
    ),
    kpi(
      'purchases',
      'Purchases',
      formatCount(totals.purchases),
      previous && change(totals.purchases, previous.purchases),
    ),
  ];
  // A higher bounce rate is the worse one: its colors are the other way round.
  items[3]?.setAttribute('data-better', 'down');
  const currencies = new Set([...totals.revenue, ...(previous?.revenue ?? [])].map((r) => r.currency));
  if (currencies.size === 0) items.push(kpi('revenue', 'Revenue', formatCount(0), previous && change(0, 0)));
  for (const currency of [...currencies].sort()) {
    const amount = totals.revenue.find((r) => r.currency === currency)?.amount ?? '0';
    const before = previous?.revenue.find((r) => r.currency === currency)?.amount ?? '0';
    items.push(
      kpi(
        `revenue-${currency}`,
        `Revenue (${currency})`,
        formatMoney(amount, currency),
        previous && change(Number(amount), Number(before)),
      ),
    );
  }
  return items;
}

function table(caption: string, head: string[], rows: (string | Node)[][]): HTMLElement {
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...head.map((cell) => h('th', { scope: 'col' }, cell)))),
    h(
      'tbody',
      {},
      ...rows.map(([first = '', ...rest]) =>
        h('tr', {}, h('th', { scope: 'row' }, first), ...rest.map((cell) => h('td', {}, cell))),
      ),
    ),
  );
}

/** The chart's numbers: one row a day; the one not over yet (`current`) says "(so far)". */
export function dailyTable(series: StatsTimeseries, current: number): HTMLElement {
  return table(
    'Daily numbers',
    ['Day', 'Visitors', 'Page views', 'Purchases', 'Events'],
    series.points.map((p, i) => [
      i === current
        ? h('span', {}, p.start.slice(0, 10), h('span', { class: 'so-far' }, ' (so far)'))
        : p.start.slice(0, 10),
      formatCount(p.visitors),
      formatCount(p.pageviews),
      formatCount(p.purchases),
      formatCount(p.events),
    ]),
  );
}

/** A top list: which dimension, its caption and value heading, and its second count. */
export interface TopSpec {
  dimension: StatsDimension;
  caption: string;
  heading: string;
  /** `pageviews`: the rows' `events` (page views); `visits`: their visits. */
  count: 'pageviews' | 'visits';
}

/**
 * A top list with the rest as `other` when the API has one. Unless `filterable` is false, each
 * value is a button that filters the dashboard by it (`data-dimension`, `data-value`).
 */
export function topTable(spec: TopSpec, breakdown: StatsBreakdown, filterable: boolean): HTMLElement {
  const value = (v: string) => {
    const shown = displayValue(spec.dimension, v);
    if (!filterable) return shown;
    return h(
      'button',
      {
        type: 'button',
        class: 'pick',
        'data-dimension': spec.dimension,
        'data-value': v,
        'aria-describedby': 'ptd-filter-hint',
      },
      shown,
    );
  };
  const second = (r: StatsBreakdown['rows'][number]) => formatCount(spec.count === 'visits' ? r.visits : r.events);
  const rows = [
    ...breakdown.rows.map((r) => [value(r.value), formatCount(r.visitors), second(r)]),
    ...(breakdown.other
      ? [[breakdown.other.value, formatCount(breakdown.other.visitors), second(breakdown.other)]]
      : []),
  ];
  const card = h(
    'section',
    { class: 'card', 'data-dimension': spec.dimension },
    table(spec.caption, [spec.heading, 'Visitors', spec.count === 'visits' ? 'Visits' : 'Page views'], rows),
  );
  if (rows.length === 0) card.append(h('p', { class: 'note' }, 'Nothing in this period.'));
  return card;
}
