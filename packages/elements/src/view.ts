// The element's DOM: built with createElement and textContent only (paths, referrers and utm
// values come from visitors' browsers: never parsed as HTML).
import type {
  StatsBreakdown,
  StatsDimension,
  StatsFunnel,
  StatsGoalTotals,
  StatsRealtime,
  StatsSummary,
  StatsTimeseries,
} from '@partner/sdk';
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
  daily: HTMLElement;
  soFarKey: HTMLElement;
  goals: HTMLElement;
  funnel: HTMLElement;
  funnelNote: HTMLElement;
  funnelBars: HTMLElement;
  funnelTable: HTMLElement;
  tops: HTMLElement;
}

/**
 * "Download CSV" of what a card shows (`data-csv`: `daily`, `goals`, `funnel` or a top list's
 * dimension); the card's name completes its accessible name.
 */
function csvButton(kind: string, what: string): HTMLElement {
  return h(
    'button',
    { type: 'button', class: 'link', 'data-csv': kind },
    'Download CSV',
    h('span', { class: 'sr-only' }, ` of ${what}`),
  );
}

/** "Show as table" for the visually hidden table `id` (the chart's numbers). */
function tableToggle(id: string): HTMLElement {
  return h(
    'button',
    { type: 'button', class: 'link', 'data-toggle': '', 'aria-expanded': 'false', 'aria-controls': id },
    'Show as table',
  );
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
    h(
      'div',
      { class: 'card-head' },
      h('h3', { id: 'ptd-chart-title' }, 'Visitors and page views per day'),
      h('div', { class: 'actions' }, tableToggle('ptd-daily'), csvButton('daily', 'the daily numbers')),
    ),
    legend,
    chart,
    daily,
  );
  const goals = h('section', { class: 'card', 'data-card': 'goals', hidden: '' });
  const funnelNote = h('p', { class: 'note' });
  const funnelBars = h('ol', { class: 'funnel', 'aria-hidden': 'true' });
  const funnelTable = h('div', { class: 'table-wrap sr-only', id: 'ptd-funnel' });
  const funnel = h(
    'section',
    { class: 'card', 'data-card': 'funnel', 'aria-labelledby': 'ptd-funnel-title', hidden: '' },
    h(
      'div',
      { class: 'card-head' },
      h('h3', { id: 'ptd-funnel-title' }, 'Funnel'),
      h('div', { class: 'actions' }, tableToggle('ptd-funnel'), csvButton('funnel', 'the funnel')),
    ),
    funnelNote,
    funnelBars,
    funnelTable,
  );
  const tops = h('div', { class: 'tops' });
  const root = h(
    'section',
    { class: 'root', part: 'root', 'aria-labelledby': 'ptd-title', 'aria-busy': 'true' },
    h('div', { class: 'head' }, h('div', {}, title, range, now), periods),
    filters,
    status,
    h('div', { class: 'body' }, kpis, chartCard, goals, funnel, tops),
  );
  return {
    root,
    title,
    range,
    now,
    periods,
    filters,
    status,
    kpis,
    chart,
    daily,
    soFarKey,
    goals,
    funnel,
    funnelNote,
    funnelBars,
    funnelTable,
    tops,
  };
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
  else card.append(h('p', { class: 'foot' }, csvButton(spec.dimension, spec.caption)));
  return card;
}

/** The goals card's content: each goal's conversions and conversion rate, oldest goal first. */
export function goalsContent(goals: StatsGoalTotals[]): HTMLElement[] {
  return [
    table(
      'Goals',
      ['Goal', 'Conversions', 'Conversion rate'],
      goals.map((g) => [g.name, formatCount(g.conversions), formatShare(g.conversionRate)]),
    ),
    h(
      'p',
      { class: 'foot' },
      h('span', { class: 'note' }, 'Conversion rate: visitors who converted over all visitors.'),
      csvButton('goals', 'the goals'),
    ),
  ];
}

const UNITS = ['day', 'hour', 'minute', 'second'];

/** An ISO 8601 duration of days to seconds in words: `P1D` "1 day", `PT1H30M` "1 hour 30 minutes". */
export function durationWords(iso: string): string {
  const parts = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(iso)?.slice(1) ?? [];
  const words = parts.flatMap((n, i) => (n ? [`${Number(n)} ${UNITS[i]}${Number(n) === 1 ? '' : 's'}`] : []));
  return words.join(' ') || iso;
}

/**
 * The funnel as bars (hidden from assistive technology: `funnelTable`'s table has the same
 * numbers): each step's visitors against the first step's, and the share lost between steps.
 */
export function funnelBars(funnel: StatsFunnel): HTMLElement[] {
  const first = funnel.steps[0]?.visitors ?? 0;
  return funnel.steps.flatMap((step, i) => {
    const bar = h('span', { class: 'bar' });
    // A CSSOM property, not a style attribute: allowed by a CSP without 'unsafe-inline'.
    bar.style.width = `${first === 0 ? 0 : (step.visitors / first) * 100}%`;
    const item = h(
      'li',
      { class: 'step', 'data-goal': step.goalId },
      h('span', { class: 'step-name' }, `${i + 1}. ${step.name}`),
      h('span', { class: 'track' }, bar),
      h(
        'span',
        { class: 'step-value' },
        `${formatCount(step.visitors)} visitors · ${formatShare(step.conversionRate)}`,
      ),
    );
    if (i === 0) return [item];
    return [h('li', { class: 'drop' }, `↓ ${formatShare(step.dropOff)} dropped off`), item];
  });
}

/** The funnel's numbers as a table: one row a step. */
export function funnelTable(funnel: StatsFunnel): HTMLElement {
  return table(
    'Funnel steps',
    ['Step', 'Visitors', 'Conversion rate', 'Drop-off'],
    funnel.steps.map((step, i) => [
      `${i + 1}. ${step.name}`,
      formatCount(step.visitors),
      formatShare(step.conversionRate),
      i === 0 ? '–' : formatShare(step.dropOff),
    ]),
  );
}
