// <partner-tags-dashboard>: one merchant's statistics (summary against the previous period, a daily
// chart, top pages and sources) read in the browser with a merchant session through the SDK's
// MerchantClient, which renews the session through `fetchSession` before it expires and after a 401.
import {
  MerchantClient,
  type SessionGrant,
  type StatsBreakdown,
  type StatsSummary,
  type StatsTimeseries,
} from '@partner/sdk';
import type uPlot from 'uplot';
import { chartColors, drawChart } from './chart.js';
import { browserTimeZone, dayCount, lastDays, PERIODS } from './format.js';
import { errorMessage, SetupError } from './messages.js';
import { STYLES } from './styles.js';
import { dailyTable, h, type Parts, skeleton, summaryItems, topTable } from './view.js';

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

interface Loaded {
  summary: StatsSummary;
  daily: StatsTimeseries;
  pages: StatsBreakdown;
  referrers: StatsBreakdown;
  sources: StatsBreakdown;
}

const CLIENT_ATTRIBUTES = new Set(['api-base', 'session-token', 'session-expires-at', 'merchant-id']);

export class PartnerTagsDashboard extends HTMLElement {
  static observedAttributes = [...CLIENT_ATTRIBUTES, 'start-date', 'end-date', 'days', 'timezone', 'theme', 'heading'];

  readonly #parts: Parts;
  #fetchSession: (() => Promise<DashboardSession>) | undefined;
  #client: Promise<{ client: MerchantClient; merchantId: string }> | undefined;
  #days = 30;
  #generation = 0;
  #scheduled = false;
  #state: DashboardState = 'loading';
  #daily: StatsTimeseries | undefined;
  #chart: uPlot | undefined;
  #resize: ResizeObserver | undefined;
  readonly #scheme = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : undefined;
  readonly #redraw = () => this.#drawChart();

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

  /** Loads the statistics again; resolves when they are shown (or the error is). */
  refresh(): Promise<void> {
    return this.#load();
  }

  connectedCallback(): void {
    this.#resize ??= new ResizeObserver(() => {
      const width = Math.max(280, this.#parts.chart.clientWidth);
      if (this.#chart && this.#chart.width !== width) this.#chart.setSize({ width, height: this.#chart.height });
    });
    this.#resize.observe(this.#parts.chart);
    this.#scheme?.addEventListener('change', this.#redraw);
    this.#schedule();
  }

  disconnectedCallback(): void {
    this.#resize?.disconnect();
    this.#scheme?.removeEventListener('change', this.#redraw);
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
    if (name === 'days') {
      const days = Number(value);
      this.#days = (PERIODS as readonly number[]).includes(days) ? days : 30;
    }
    if (CLIENT_ATTRIBUTES.has(name)) this.#client = undefined;
    this.#schedule();
  }

  #wire(): void {
    const { periods, toggle, daily, status } = this.#parts;
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
    toggle.addEventListener('click', () => {
      const open = toggle.getAttribute('aria-expanded') !== 'true';
      toggle.setAttribute('aria-expanded', String(open));
      toggle.textContent = open ? 'Hide table' : 'Show as table';
      daily.classList.toggle('sr-only', !open);
      if (open) daily.setAttribute('tabindex', '0');
      else daily.removeAttribute('tabindex');
    });
    status.addEventListener('click', (event) => {
      if ((event.target as Element).closest('button[data-retry]')) void this.#load();
    });
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

  async #load(): Promise<void> {
    const generation = ++this.#generation;
    const range = this.range;
    this.#showRange(range);
    this.#setState('loading', 'Loading statistics…');
    try {
      const { client, merchantId } = await this.#session();
      const params = { merchantId, ...range };
      const top = (dimension: 'path' | 'referrer' | 'utm_source') =>
        client.stats.breakdown({ ...params, dimension, limit: 10 });
      const [summary, daily, pages, referrers, sources] = await Promise.all([
        client.stats.summary({ ...params, compare: 'previous' }),
        client.stats.timeseries({ ...params, interval: 'day' }),
        top('path'),
        top('referrer'),
        top('utm_source'),
      ]);
      if (generation !== this.#generation) return;
      this.#render({ summary, daily, pages, referrers, sources });
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
    const { kpis, daily, tops } = this.#parts;
    kpis.replaceChildren(...summaryItems(loaded.summary));
    daily.replaceChildren(dailyTable(loaded.daily));
    tops.replaceChildren(
      topTable('Top pages', 'Page', loaded.pages),
      topTable('Top referrers', 'Referrer', loaded.referrers),
      topTable('Top sources (utm_source)', 'Source', loaded.sources),
    );
    this.#daily = loaded.daily;
    const empty = loaded.summary.totals.events === 0;
    this.#setState(empty ? 'empty' : 'ready', empty ? 'No visits yet in this period.' : '');
    this.#drawChart();
    this.dispatchEvent(new CustomEvent('ptd-load', { detail: { range: loaded.summary.range } }));
  }

  #drawChart(): void {
    this.#chart?.destroy();
    this.#chart = undefined;
    if (!this.#daily || this.#state !== 'ready') return;
    this.#chart = drawChart(this.#parts.chart, this.#daily, chartColors(this), this.range.timezone);
  }
}
