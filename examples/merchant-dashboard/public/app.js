// The dashboard page: reads /api/dashboard (this backend; the API key never reaches the browser)
// and renders it. Every value from the API is set as text, never as HTML: paths, referrers and
// utm values come from visitors' browsers.
const number = new Intl.NumberFormat('en-US');
const percent = new Intl.NumberFormat('en-US', {
  style: 'percent',
  maximumFractionDigits: 1,
  minimumFractionDigits: 1,
  signDisplay: 'always',
});
const money = (amount, currency) =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency, minimumFractionDigits: 2 }).format(Number(amount));

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'className') node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

/** "+12.5%" against the previous 30 days, or "new" / "no change" when it had none. */
function change(current, previous) {
  if (previous === undefined) return { text: '', direction: '' };
  if (previous === 0)
    return current === 0 ? { text: 'no change', direction: '' } : { text: 'new this period', direction: 'up' };
  const ratio = (current - previous) / previous;
  const direction = ratio > 0 ? 'up' : ratio < 0 ? 'down' : '';
  return { text: percent.format(ratio), direction };
}

function kpi(metric, label, value, delta, small = false) {
  return el(
    'li',
    { className: 'kpi', 'data-metric': metric },
    el('span', { className: 'kpi-label' }, label),
    el('span', { className: `kpi-value${small ? ' small' : ''}` }, value),
    el('span', { className: `kpi-change ${delta.direction}` }, delta.text),
  );
}

function renderSummary({ totals, previous }) {
  const before = previous?.totals;
  const items = [
    kpi('events', 'Events', number.format(totals.events), change(totals.events, before?.events)),
    kpi('visitors', 'Visitors', number.format(totals.visitors), change(totals.visitors, before?.visitors)),
    kpi('pageviews', 'Page views', number.format(totals.pageviews), change(totals.pageviews, before?.pageviews)),
    kpi('purchases', 'Purchases', number.format(totals.purchases), change(totals.purchases, before?.purchases)),
  ];
  const revenue = totals.revenue.length > 0 ? totals.revenue : [{ currency: 'none', amount: '0' }];
  for (const { currency, amount } of revenue) {
    const old = before?.revenue.find((r) => r.currency === currency);
    const shown = currency === 'none' ? '—' : money(amount, currency);
    const label = currency === 'none' ? 'Revenue' : `Revenue (${currency})`;
    items.push(
      kpi(
        `revenue-${currency}`,
        label,
        shown,
        change(Number(amount), before ? Number(old?.amount ?? 0) : undefined),
        true,
      ),
    );
  }
  document.getElementById('kpis').replaceChildren(...items);
}

const revenueText = (revenue) => revenue.map((r) => money(r.amount, r.currency)).join(', ') || '—';

function renderDailyTable(points) {
  const rows = points.map((p) =>
    el(
      'tr',
      {},
      el('th', { scope: 'row' }, p.start.slice(0, 10)),
      el('td', {}, number.format(p.events)),
      el('td', {}, number.format(p.visitors)),
      el('td', {}, number.format(p.pageviews)),
      el('td', {}, number.format(p.purchases)),
      el('td', {}, revenueText(p.revenue)),
    ),
  );
  document.querySelector('#daily-table tbody').replaceChildren(...rows);
}

function renderChart({ points, range }) {
  const target = document.getElementById('chart');
  const data = [
    points.map((p) => Date.parse(p.start) / 1000),
    points.map((p) => p.pageviews),
    points.map((p) => p.visitors),
    points.map((p) => p.purchases),
  ];
  const width = () => Math.max(320, target.clientWidth);
  const plot = new uPlot(
    {
      width: width(),
      height: 300,
      // Days start at local midnight of the range's zone, not the browser's.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), range.timezone),
      cursor: { drag: { x: false, y: false } },
      legend: { live: false },
      // Half a day either side, so the first and last bars are whole.
      scales: {
        x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
        purchases: { range: (_u, _min, max) => [0, Math.max(4, max * 1.25)] },
      },
      series: [
        { label: 'Day', value: '{YYYY}-{MM}-{DD}' },
        { label: 'Page views', stroke: '#2563eb', fill: 'rgba(37, 99, 235, 0.10)', width: 2, points: { show: false } },
        { label: 'Visitors', stroke: '#0f766e', width: 2, points: { show: false } },
        {
          label: 'Purchases',
          scale: 'purchases',
          stroke: '#c2410c',
          fill: 'rgba(234, 88, 12, 0.35)',
          paths: uPlot.paths.bars({ size: [0.45, 18] }),
          points: { show: false },
        },
      ],
      axes: [
        { stroke: '#545d6b', grid: { stroke: '#eef0f3' }, ticks: { stroke: '#e3e6eb' } },
        { stroke: '#545d6b', grid: { stroke: '#eef0f3' }, ticks: { stroke: '#e3e6eb' }, size: 50 },
        {
          scale: 'purchases',
          side: 1,
          stroke: '#c2410c',
          grid: { show: false },
          ticks: { stroke: '#e3e6eb' },
          size: 40,
        },
      ],
    },
    data,
    target,
  );
  new ResizeObserver(() => plot.setSize({ width: width(), height: 300 })).observe(target);
}

function renderTop(id, heading, breakdown) {
  const total = breakdown.rows.reduce((sum, r) => sum + r.events, 0) + (breakdown.other?.events ?? 0);
  const row = (r, className = '') => {
    const share = el('span', { className: 'share', 'aria-hidden': 'true' });
    share.style.width = `${total ? (r.events / total) * 100 : 0}%`;
    return el(
      'tr',
      className ? { className } : {},
      el('th', { scope: 'row' }, share, el('span', {}, r.value)),
      el('td', {}, number.format(r.events)),
      el('td', {}, number.format(r.visitors)),
    );
  };
  const table = document.getElementById(id);
  const caption = table.querySelector('caption');
  const head = el(
    'thead',
    {},
    el(
      'tr',
      {},
      el('th', { scope: 'col' }, heading),
      el('th', { scope: 'col' }, 'Views'),
      el('th', { scope: 'col' }, 'Visitors'),
    ),
  );
  const body = el('tbody', {}, ...breakdown.rows.map((r) => row(r)));
  if (breakdown.other) body.append(row(breakdown.other, 'other'));
  if (breakdown.rows.length === 0)
    body.append(el('tr', {}, el('td', { colspan: '3' }, 'No page views in this period')));
  table.replaceChildren(caption, head, body);
}

async function main() {
  const status = document.getElementById('status');
  const main = document.querySelector('main');
  try {
    const res = await fetch('/api/dashboard');
    const data = await res.json();
    if (!res.ok) throw new Error(data.error ?? `HTTP ${res.status}`);
    const { range } = data.summary;
    document.title = `${data.merchant.name}: dashboard`;
    document.getElementById('merchant-name').textContent = data.merchant.name;
    document.getElementById('range').textContent =
      `Last 30 days: ${range.startDate} to ${range.endDate} (${range.timezone})`;
    renderSummary(data.summary);
    renderChart(data.daily);
    renderDailyTable(data.daily.points);
    renderTop('pages-table', 'Page', data.pages);
    renderTop('referrers-table', 'Referrer', data.referrers);
    renderTop('sources-table', 'utm_source', data.sources);
    status.textContent = '';
    status.hidden = true;
  } catch (error) {
    status.textContent = `Could not load the statistics: ${error.message}`;
    status.className = 'error';
  } finally {
    main.setAttribute('aria-busy', 'false');
  }
}

main();
