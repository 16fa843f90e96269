// <partner-tags-dashboard>: one merchant's statistics (summary against the previous period, a daily
// chart, goals, a funnel, top pages, sources, places and devices, visitors now; each card also as a
// CSV download) read in the browser with a merchant session through the SDK's MerchantClient, which
// renews the session through `fetchSession` before it expires and after a 401. A value picked in a
// table filters every call (the `filters` attribute).
import {
  APIError,
  MerchantClient,
  type SessionGrant,
  type StatsBreakdown,
  type StatsDimension,
  type StatsFilter,
  type StatsFunnel,
  type StatsSummary,
  type StatsTimeseries,
} from '@partner/sdk';
import type uPlot from 'uplot';
import { chartColors, drawChart } from './chart.js';
import { goalsCsv, saveCsv } from './csv.js';
import { type Filter, formatFilters, parseFilters } from './filters.js';
import { browserTimeZone, currentPoint, dayCount, lastDays, PERIODS } from './format.js';
import { errorMessage, SetupError } from './messages.js';
import { STYLES } from './styles.js';
import {
  dailyTable,
  durationWords,
  filterItems,
  funnelBars,
  funnelTable,
  goalsContent,
  h,
  nowItems,
  type Parts,
  skeleton,
  summaryItems,
  type TopSpec,
  topTable,
} from './view.js';

/** What `fetchSession` resolves with: the answer of `client.merchants.sessions.create` will do. */
export interface DashboardSession extends SessionGrant {
  /** The session's merchant; needed when the element has no `merchant-id` attribute. */
  merchantId?: string;
}

export type DashboardState = 'loading' | 'ready' | 'empty' | 'error';

/** The range the element shows: inclusive local dates in `timezone`. */
export interface DashboardRange {
  startDate: string;
  endDate: string;
  timezone: string;
}

/** A filter of the dashboard: `dimension` is one of `values` (with `not`, none of them). */
export type DashboardFilter = Filter;

/** What every stats call of a load gets. */
interface Params extends DashboardRange {
  merchantId: string;
  filters: Filter[];
}

/** The funnel asked for by the `funnel` and `funnel-window` attributes. */
interface FunnelAsk {
  steps: string[];
  window: string | undefined;
}

interface Loaded {
  params: Params;
  summary: StatsSummary;
  daily: StatsTimeseries;
  tops: StatsBreakdown[];
  filters: Filter[];
  /** The funnel's answer, or why there is none; absent without a `funnel` attribute. */
  funnel?: { ask: FunnelAsk; answer: StatsFunnel | Error };
}

/** Accept header of a CSV download: the API answers the same read as `text/csv`. */
const CSV = { headers: { accept: 'text/csv' } };

/** The top lists, in their order on screen. */
const TOPS: TopSpec[] = [
  { dimension: 'path', caption: 'Top pages', heading: 'Page', count: 'pageviews' },
  { dimension: 'entry_page', caption: 'Entry pages', heading: 'Page', count: 'visits' },
  { dimension: 'channel', caption: 'Channels', heading: 'Channel', count: 'visits' },
  { dimension: 'referrer', caption: 'Top referrers', heading: 'Referrer', count: 'pageviews' },
  { dimension: 'utm_source', caption: 'Top sources (utm_source)', heading: 'Source', count: 'pageviews' },
  { dimension: 'country', caption: 'Countries', heading: 'Country', count: 'visits' },
  { dimension: 'device', caption: 'Devices', heading: 'Device', count: 'visits' },
  { dimension: 'browser', caption: 'Browsers', heading: 'Browser', count: 'visits' },
];

/**
 * Runs at most `n` tasks at a time, the others in order: the API answers a session's third stats
 * read in flight with 429 (docs/decisions/stats.md, "Bounded reads").
 */
function limiter(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    while (running >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/** A load's read not started because a newer load began. */
class Superseded extends Error {}

const CLIENT_ATTRIBUTES = new Set(['api-base', 'session-token', 'session-expires-at', 'merchant-id']);

export class PartnerTagsDashboard extends HTMLElement {
  static observedAttributes = [
    ...CLIENT_ATTRIBUTES,
    'start-date',
    'end-date',
    'days',
    'timezone',
    'theme',
    'heading',
    'filters',
    'realtime-interval',
    'funnel',
    'funnel-window',
  ];

  readonly #parts: Parts;
  #fetchSession: (() => Promise<DashboardSession>) | undefined;
  #client: Promise<{ client: MerchantClient; merchantId: string }> | undefined;
  #days = 30;
  #generation = 0;
  #scheduled = false;
  #state: DashboardState = 'loading';
  #daily: StatsTimeseries | undefined;
  /** What is on screen: the CSV downloads are of it. */
  #shown: Loaded | undefined;
  #current = -1;
  #chart: uPlot | undefined;
  #resize: ResizeObserver | undefined;
  readonly #scheme = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : undefined;
  readonly #redraw = () => this.#drawChart();
  /** Visitors now: refreshed every `realtime-interval` seconds while the element is on screen. */
  #live: ReturnType<typeof setInterval> | undefined;
  #liveAt = 0;
  /** Every stats call of the element, two at a time. */
  readonly #read = limiter(2);
  #onScreen = typeof IntersectionObserver !== 'function';
  #sight: IntersectionObserver | undefined;
  readonly #syncLive = () => this.#startOrStopLive();

  constructor() {
    super();
    const shadow = this.attachShadow({ mode: 'open' });
    this.#parts = skeleton();
    // A constructed sheet passes a page's strict CSP (no 'unsafe-inline' needed).
    if (
      'adoptedStyleSheets' in shadow &&
      typeof CSSStyleSheet === 'function' &&
      'replaceSync' in CSSStyleSheet.prototype
    ) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(STYLES);
      shadow.adoptedStyleSheets = [sheet];
    } else {
      shadow.append(h('style', {}, STYLES));
    }
    shadow.append(this.#parts.root);
    this.#wire();
    // A page may set the property before the element is defined: it is then an own property of the
    // plain element, which would hide the accessor. Taken over here.
    if (Object.hasOwn(this, 'fetchSession')) {
      const fetcher = (this as { fetchSession?: () => Promise<DashboardSession> }).fetchSession;
      delete (this as { fetchSession?: unknown }).fetchSession;
      this.#fetchSession = fetcher;
    }
  }

  /** Fetches a new session from the partner's backend; used first when no `session-token` is set. */
  get fetchSession(): (() => Promise<DashboardSession>) | undefined {
    return this.#fetchSession;
  }

  set fetchSession(fetcher: (() => Promise<DashboardSession>) | undefined) {
    this.#fetchSession = fetcher;
    this.#client = undefined;
    this.#schedule();
  }

  get sessionToken(): string | null {
    return this.getAttribute('session-token');
  }

  set sessionToken(token: string | null) {
    if (token) this.setAttribute('session-token', token);
    else this.removeAttribute('session-token');
  }

  /** loading, ready, empty (no visits in the range) or error; also the `data-state` attribute. */
  get state(): DashboardState {
    return this.#state;
  }

  /** The range shown: `start-date`/`end-date` when both are set, else the picker's last N days. */
  get range(): DashboardRange {
    const timezone = this.getAttribute('timezone') || browserTimeZone();
    const startDate = this.getAttribute('start-date');
    const endDate = this.getAttribute('end-date');
    if (startDate && endDate) return { startDate, endDate, timezone };
    return { ...lastDays(this.#days, timezone), timezone };
  }

  /** The filters every call gets: the `filters` attribute (`country==DE;channel==Email`) read. */
  get filters(): DashboardFilter[] {
    return parseFilters(this.getAttribute('filters'));
  }

  set filters(filters: readonly StatsFilter[]) {
    const text = formatFilters(
      filters.map((f) => ({ dimension: f.dimension, values: [f.values].flat(), not: !!f.not })),
    );
    if (text) this.setAttribute('filters', text);
    else this.removeAttribute('filters');
  }

  /** Loads the statistics again; resolves when they are shown (or the error is). */
  refresh(): Promise<void> {
    if (this.#live !== undefined) void this.#loadNow();
    return this.#load();
  }

  connectedCallback(): void {
    this.#resize ??= new ResizeObserver(() => {
      const width = Math.max(280, this.#parts.chart.clientWidth);
      if (this.#chart && this.#chart.width !== width) this.#chart.setSize({ width, height: this.#chart.height });
    });
    this.#resize.observe(this.#parts.chart);
    this.#scheme?.addEventListener('change', this.#redraw);
    if (typeof IntersectionObserver === 'function') {
      this.#sight ??= new IntersectionObserver((entries) => {
        this.#onScreen = entries[entries.length - 1]?.isIntersecting ?? this.#onScreen;
        this.#startOrStopLive();
      });
      this.#sight.observe(this);
    }
    document.addEventListener('visibilitychange', this.#syncLive);
    this.#renderFilters();
    this.#schedule();
  }

  disconnectedCallback(): void {
    this.#resize?.disconnect();
    this.#scheme?.removeEventListener('change', this.#redraw);
    this.#sight?.disconnect();
    this.#onScreen = !this.#sight;
    document.removeEventListener('visibilitychange', this.#syncLive);
    this.#startOrStopLive();
  }

  attributeChangedCallback(name: string, previous: string | null, value: string | null): void {
    if (previous === value) return;
    if (name === 'theme') {
      this.#drawChart();
      return;
    }
    if (name === 'heading') {
      this.#parts.title.textContent = value || 'Statistics';
      return;
    }
    if (name === 'realtime-interval') {
      this.#startOrStopLive();
      return;
    }
    if (name === 'days') {
      const days = Number(value);
      this.#days = (PERIODS as readonly number[]).includes(days) ? days : 30;
    }
    if (name === 'filters') this.#renderFilters();
    if (CLIENT_ATTRIBUTES.has(name)) {
      this.#client = undefined;
      this.#liveAt = 0;
    }
    this.#schedule();
  }

  #wire(): void {
    const { root, periods, status, filters, tops } = this.#parts;
    periods.addEventListener('click', (event) => {
      const button = (event.target as Element).closest('button[data-days]');
      if (!button) return;
      this.#days = Number(button.getAttribute('data-days'));
      this.#schedule();
    });
    // Arrow keys move between the periods, as in a toolbar.
    periods.addEventListener('keydown', (event) => {
      const buttons = [...periods.querySelectorAll('button')];
      const at = buttons.indexOf(event.target as HTMLButtonElement);
      const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
      const target =
        event.key === 'Home' ? 0 : event.key === 'End' ? buttons.length - 1 : step === undefined ? -1 : at + step;
      if (at < 0 || target < 0) return;
      event.preventDefault();
      buttons[(target + buttons.length) % buttons.length]?.focus();
    });
    // "Show as table" of the chart and of the funnel; "Download CSV" of each card.
    root.addEventListener('click', (event) => {
      const button = (event.target as Element).closest('button');
      const table =
        button?.hasAttribute('data-toggle') && root.querySelector(`#${button.getAttribute('aria-controls')}`);
      if (button && table) {
        const open = button.getAttribute('aria-expanded') !== 'true';
        button.setAttribute('aria-expanded', String(open));
        button.textContent = open ? 'Hide table' : 'Show as table';
        table.classList.toggle('sr-only', !open);
        if (open) table.setAttribute('tabindex', '0');
        else table.removeAttribute('tabindex');
      }
      const kind = button?.getAttribute('data-csv');
      if (button && kind) void this.#download(button, kind);
    });
    status.addEventListener('click', (event) => {
      if ((event.target as Element).closest('button[data-retry]')) void this.#load();
    });
    // A value of a table (its button, or anywhere on its row) filters the dashboard by it.
    tops.addEventListener('click', (event) => {
      const target = event.target as Element;
      const pick = target.closest('.pick') ?? target.closest('tr')?.querySelector('.pick');
      const dimension = pick?.getAttribute('data-dimension') as StatsDimension | null;
      if (!pick || !dimension) return;
      const next = this.filters.filter((f) => f.dimension !== dimension);
      next.push({ dimension, values: [pick.getAttribute('data-value') ?? ''], not: false });
      this.#changeFilters(next, next.length - 1);
    });
    filters.addEventListener('click', (event) => {
      const target = event.target as Element;
      const chip = target.closest('.chip');
      if (target.closest('[data-clear]')) this.#changeFilters([], -1);
      if (!chip) return;
      const list = this.filters;
      const at = list.findIndex((f) => f.dimension === chip.getAttribute('data-dimension'));
      list.splice(at, 1);
      this.#changeFilters(list, Math.min(at, list.length - 1));
    });
  }

  /** Sets the filters (the attribute: the bar and a load follow), says so, and moves focus to `focus`'s chip or the heading. */
  #changeFilters(filters: Filter[], focus: number): void {
    this.filters = filters;
    this.dispatchEvent(new CustomEvent('ptd-filter', { detail: { filters: this.filters } }));
    const chips = this.#parts.filters.querySelectorAll<HTMLElement>('.chip');
    (chips[focus] ?? this.#parts.title).focus();
  }

  #renderFilters(): void {
    const items = filterItems(this.filters);
    this.#parts.filters.replaceChildren(...items);
    this.#parts.filters.hidden = items.length === 0;
  }

  #liveSeconds(): number {
    const value = this.getAttribute('realtime-interval');
    const seconds = value === null || value === '' ? 30 : Number(value);
    return seconds > 0 ? Math.max(5, seconds) : 0;
  }

  /** Runs the visitors-now timer while the element is connected, on screen and its page shown; else stops it. */
  #startOrStopLive(): void {
    clearInterval(this.#live);
    this.#live = undefined;
    const seconds = this.#liveSeconds();
    if (!this.isConnected || !this.#onScreen || document.visibilityState === 'hidden' || seconds === 0) return;
    if (Date.now() - this.#liveAt >= seconds * 1000) void this.#loadNow();
    this.#live = setInterval(() => void this.#loadNow(), seconds * 1000);
  }

  async #loadNow(): Promise<void> {
    this.#liveAt = Date.now();
    try {
      const { client, merchantId } = await this.#session();
      const now = await this.#read(() => client.stats.realtime({ merchantId }));
      this.#parts.now.replaceChildren(...nowItems(now));
      this.#parts.now.hidden = false;
    } catch {
      // Shown as it was; the next tick tries again (a failed load says what is wrong).
      this.#liveAt = 0;
    }
  }

  #schedule(): void {
    if (!this.isConnected || this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      void this.#load();
    });
  }

  #session(): Promise<{ client: MerchantClient; merchantId: string }> {
    this.#client ??= this.#connect();
    const pending = this.#client;
    // A failed start is not kept: the next load tries again.
    pending.catch(() => {
      if (this.#client === pending) this.#client = undefined;
    });
    return pending;
  }

  async #connect(): Promise<{ client: MerchantClient; merchantId: string }> {
    const baseURL = this.getAttribute('api-base');
    if (!baseURL) throw new SetupError('set its api-base attribute to the API’s address.');
    const fetcher = this.#fetchSession;
    const token = this.getAttribute('session-token') || undefined;
    if (!token && !fetcher) throw new SetupError('give it a session-token or a fetchSession function.');
    let merchantId = this.getAttribute('merchant-id') || undefined;
    let grant: DashboardSession | undefined;
    if (!token && fetcher && !merchantId) {
      grant = await fetcher();
      merchantId = grant.merchantId;
    }
    if (!merchantId) throw new SetupError('set its merchant-id attribute.');
    const client = new MerchantClient({
      baseURL,
      sessionToken: grant?.token ?? token,
      expiresAt: grant?.expiresAt ?? (this.getAttribute('session-expires-at') || undefined),
      refreshSession: fetcher ? () => fetcher() : undefined,
      maxRetries: 1,
      timeout: 20_000,
    });
    return { client, merchantId };
  }

  /** The `funnel` attribute's goal ids and `funnel-window`; null without a `funnel` attribute. */
  #funnelAsk(): FunnelAsk | null {
    const steps = this.getAttribute('funnel');
    if (steps === null) return null;
    return {
      steps: steps.split(',').flatMap((id) => id.trim() || []),
      window: this.getAttribute('funnel-window') || undefined,
    };
  }

  async #load(): Promise<void> {
    const generation = ++this.#generation;
    const range = this.range;
    this.#showRange(range);
    this.#setState('loading', 'Loading statistics…');
    const filters = this.filters;
    const ask = this.#funnelAsk();
    try {
      const { client, merchantId } = await this.#session();
      const params = { merchantId, ...range, filters };
      // Queued two at a time; what a newer load made useless is not sent.
      const read = <T>(call: () => Promise<T>) =>
        this.#read(() => (generation === this.#generation ? call() : Promise.reject(new Superseded())));
      // A funnel that cannot be read (a wrong goal id) says so in its card; the rest is shown.
      const funnel = async (): Promise<StatsFunnel | Error | null> => {
        if (!ask) return null;
        if (ask.steps.length < 2 || ask.steps.length > 8) return new SetupError('give 2 to 8 goal ids.');
        try {
          return await read(() => client.stats.funnel({ ...params, ...ask }));
        } catch (error) {
          if (error instanceof Superseded) throw error;
          return error as Error;
        }
      };
      const [summary, daily, answer, ...tops] = await Promise.all([
        read(() => client.stats.summary({ ...params, compare: 'previous' })),
        read(() => client.stats.timeseries({ ...params, interval: 'day' })),
        funnel(),
        ...TOPS.map(({ dimension }) => read(() => client.stats.breakdown({ ...params, dimension, limit: 10 }))),
      ]);
      if (generation !== this.#generation) return;
      this.#render({
        params,
        summary,
        daily,
        tops: tops as StatsBreakdown[],
        filters,
        ...(ask && { funnel: { ask, answer: answer as StatsFunnel | Error } }),
      });
      // Visitors now, if it failed before the session was there.
      if (this.#liveAt === 0 && this.#live !== undefined) void this.#loadNow();
    } catch (error) {
      if (generation !== this.#generation) return;
      this.#setState('error', errorMessage(error));
      this.dispatchEvent(new CustomEvent('ptd-error', { detail: { error } }));
    }
  }

  #showRange(range: DashboardRange): void {
    const custom = this.hasAttribute('start-date') && this.hasAttribute('end-date');
    const days = dayCount(range.startDate, range.endDate);
    this.#parts.range.textContent = `${range.startDate} to ${range.endDate} (${range.timezone}), compared with the ${days} days before`;
    this.#parts.periods.hidden = custom;
    for (const button of this.#parts.periods.querySelectorAll('button')) {
      button.setAttribute('aria-pressed', String(!custom && Number(button.getAttribute('data-days')) === this.#days));
    }
  }

  #setState(state: DashboardState, message: string): void {
    this.#state = state;
    this.setAttribute('data-state', state);
    const { root, status } = this.#parts;
    root.setAttribute('aria-busy', String(state === 'loading'));
    root.classList.toggle('empty', state === 'empty');
    root.classList.toggle('failed', state === 'error');
    status.setAttribute('data-kind', state);
    status.replaceChildren(...(message ? [h('span', {}, message)] : []));
    if (state === 'error') status.append(h('button', { type: 'button', class: 'link', 'data-retry': '' }, 'Try again'));
  }

  #render(loaded: Loaded): void {
    const { kpis, daily, tops, soFarKey, goals } = this.#parts;
    const current = currentPoint(loaded.daily);
    kpis.replaceChildren(...summaryItems(loaded.summary));
    const goalTotals = loaded.summary.totals.goals;
    goals.replaceChildren(...goalsContent(goalTotals));
    goals.hidden = goalTotals.length === 0;
    this.#renderFunnel(loaded.funnel);
    daily.replaceChildren(dailyTable(loaded.daily, current));
    soFarKey.hidden = current < 0;
    // A dimension filtered to its values has nothing more to pick.
    const fixed = new Set(loaded.filters.filter((f) => !f.not).map((f) => f.dimension));
    tops.replaceChildren(
      h(
        'p',
        { class: 'note hint', id: 'ptd-filter-hint' },
        'Select a value in a table to filter the whole dashboard by it.',
      ),
      ...TOPS.map((spec, i) => topTable(spec, loaded.tops[i] as StatsBreakdown, !fixed.has(spec.dimension))),
    );
    this.#daily = loaded.daily;
    this.#current = current;
    this.#shown = loaded;
    const empty = loaded.summary.totals.events === 0;
    const nothing =
      loaded.filters.length > 0 ? 'Nothing matches these filters in this period.' : 'No visits yet in this period.';
    this.#setState(empty ? 'empty' : 'ready', empty ? nothing : '');
    this.#drawChart();
    this.dispatchEvent(
      new CustomEvent('ptd-load', { detail: { range: loaded.summary.range, filters: loaded.filters } }),
    );
  }

  #renderFunnel(funnel: Loaded['funnel']): void {
    const { funnel: card, funnelNote, funnelBars: bars, funnelTable: table } = this.#parts;
    card.hidden = !funnel;
    const answer = funnel?.answer;
    const failed = answer instanceof Error;
    bars.replaceChildren(...(answer && !failed ? funnelBars(answer) : []));
    table.replaceChildren(...(answer && !failed ? [funnelTable(answer)] : []));
    for (const button of card.querySelectorAll('button')) button.hidden = failed;
    funnelNote.textContent = !answer
      ? ''
      : !failed
        ? `Visitors who reached each goal after the ones before it, within ${durationWords(answer.window)}.`
        : answer instanceof SetupError ||
            (answer instanceof APIError && (answer.status === 400 || answer.status === 404))
          ? 'The funnel cannot be shown: check the goal ids of its funnel attribute (2 to 8) and its funnel-window.'
          : `The funnel could not be loaded. ${errorMessage(answer)}`;
  }

  /** Saves the CSV of a card as shown: the API's CSV of the same read (the goals': made here). */
  async #download(button: HTMLButtonElement, kind: string): Promise<void> {
    const shown = this.#shown;
    if (!shown || button.getAttribute('aria-disabled') === 'true') return;
    const { params } = shown;
    const filename = `${kind}-${params.startDate}-to-${params.endDate}.csv`;
    button.setAttribute('aria-disabled', 'true');
    try {
      let text: string;
      if (kind === 'goals') {
        text = goalsCsv(shown.summary.totals.goals);
      } else {
        const { client } = await this.#session();
        const { stats } = client;
        const ask = shown.funnel?.ask;
        const call =
          kind === 'daily'
            ? () => stats.timeseries({ ...params, interval: 'day' }, CSV)
            : kind === 'funnel' && ask
              ? () => stats.funnel({ ...params, ...ask }, CSV)
              : () => stats.breakdown({ ...params, dimension: kind as StatsDimension, limit: 10 }, CSV);
        text = await this.#read(async () => (await call().asResponse()).text());
      }
      saveCsv(filename, text);
      this.dispatchEvent(new CustomEvent('ptd-download', { detail: { kind, filename } }));
    } catch (error) {
      this.#parts.status.replaceChildren(h('span', {}, `The CSV could not be downloaded. ${errorMessage(error)}`));
      this.dispatchEvent(new CustomEvent('ptd-error', { detail: { error } }));
    } finally {
      button.removeAttribute('aria-disabled');
    }
  }

  #drawChart(): void {
    this.#chart?.destroy();
    this.#chart = undefined;
    if (!this.#daily || this.#state !== 'ready') return;
    this.#chart = drawChart(this.#parts.chart, this.#daily, chartColors(this), this.range.timezone, this.#current);
  }
}
