import {
  Counter,
  type CounterConfiguration,
  collectDefaultMetrics,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  type Metric,
  Registry,
} from 'prom-client';

/**
 * Prometheus metrics of one app (prom-client). The registry belongs to the app (`deps.metrics`,
 * built in `startApp`), never to the module: two apps in one test process each count their own.
 *
 * Adding a metric from any layer (a service, a job, a transport):
 *
 *     const sent = deps.metrics.counter({
 *       name: 'partner_tags_webhook_deliveries_total',
 *       help: 'Webhook delivery attempts by outcome',
 *       labelNames: ['outcome'] as const,
 *     });
 *     sent.inc({ outcome: 'delivered' });
 *
 * Conventions: names start with `partner_tags_`, counters end in `_total`, durations are
 * `_seconds`; label values come from a small fixed set (an outcome, a templated route, a status
 * code), never from ids, paths, hosts or user input (each distinct value is a new time series).
 * `counter`/`gauge`/`histogram` return the already registered metric when the name exists, so
 * calling them at every construction is safe. A gauge whose value lives elsewhere reads it when
 * scraped: `gauge({ ..., collect() { this.set(queue.size) } })` or `gaugeOf(name, help, read)`.
 */
export interface Metrics {
  readonly registry: Registry;
  counter<L extends string = string>(config: MetricConfig<CounterConfiguration<L>>): Counter<L>;
  gauge<L extends string = string>(config: MetricConfig<GaugeConfiguration<L>>): Gauge<L>;
  histogram<L extends string = string>(config: MetricConfig<HistogramConfiguration<L>>): Histogram<L>;
  /** A label-less gauge whose value `read()` gives at scrape time (a queue depth, open streams). */
  gaugeOf(name: string, help: string, read: () => number): Gauge;
  /** The Prometheus text exposition (format 0.0.4) and its content type, for GET /metrics. */
  render(): Promise<{ contentType: string; body: string }>;
  /** The app's own instruments (http/, collectors, rate limits); see `createMetrics`. */
  readonly http: HttpMetrics;
  readonly ingest: IngestMetrics;
  readonly rateLimitRejections: Counter<'scope'>;
}

type MetricConfig<C> = Omit<C, 'registers'>;

interface HttpMetrics {
  /** Requests answered, by templated route (never a raw path), method and status. */
  requests: Counter<'route' | 'method' | 'status'>;
  /** Time from the request's arrival to the end of its response (seconds). */
  duration: Histogram<'route' | 'method' | 'status'>;
}

interface IngestMetrics {
  /** Collector events by outcome: `accepted`, `stored`, `rejected`. */
  events: Counter<'outcome'>;
}

type IngestOutcome = 'accepted' | 'stored' | 'rejected';
export type RateLimitScope = 'key' | 'address' | 'streams' | 'exports' | 'tag';

/** Buckets for request latency (seconds): 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricsOptions {
  /** Process metrics (CPU, RSS, event loop lag, GC, handles). Default true. */
  processMetrics?: boolean;
  /** Labels put on every series, e.g. `{ role: 'writer' }`. */
  defaultLabels?: Record<string, string>;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'partner_tags_' });

  function existing<T extends Metric>(name: string, kind: new (...args: never[]) => T): T | undefined {
    const found = registry.getSingleMetric(name);
    if (found === undefined) return undefined;
    if (!(found instanceof kind)) throw new Error(`metric ${name} is already registered as another type`);
    return found;
  }

  const counter = <L extends string>(config: MetricConfig<CounterConfiguration<L>>): Counter<L> =>
    existing<Counter<L>>(config.name, Counter) ?? new Counter<L>({ ...config, registers: [registry] });
  const gauge = <L extends string>(config: MetricConfig<GaugeConfiguration<L>>): Gauge<L> =>
    existing<Gauge<L>>(config.name, Gauge) ?? new Gauge<L>({ ...config, registers: [registry] });
  const histogram = <L extends string>(config: MetricConfig<HistogramConfiguration<L>>): Histogram<L> =>
    existing<Histogram<L>>(config.name, Histogram) ?? new Histogram<L>({ ...config, registers: [registry] });
  const gaugeOf = (name: string, help: string, read: () => number): Gauge =>
    gauge({
      name,
      help,
      collect() {
        this.set(read());
      },
    });

  const labels = ['route', 'method', 'status'] as const;
  const http: HttpMetrics = {
    requests: counter({
      name: 'partner_tags_http_requests_total',
      help: 'HTTP requests answered, by templated route, method and status',
      labelNames: labels,
    }),
    duration: histogram({
      name: 'partner_tags_http_request_duration_seconds',
      help: 'HTTP request latency (arrival to end of response), by templated route, method and status',
      labelNames: labels,
      buckets: LATENCY_BUCKETS,
    }),
  };
  const ingest: IngestMetrics = {
    events: counter({
      name: 'partner_tags_collector_events_total',
      help: 'Collector events by outcome: accepted (202, queued), stored (written), rejected',
      labelNames: ['outcome'] as const,
    }),
  };
  // Every outcome exists from the start (a rate of 0 rather than a missing series).
  for (const outcome of ['accepted', 'stored', 'rejected'] satisfies IngestOutcome[]) ingest.events.inc({ outcome }, 0);
  const rateLimitRejections = counter({
    name: 'partner_tags_rate_limit_rejections_total',
    help: "Requests refused with 429 RATE_LIMITED, by scope: key (per API key), address (collectors), streams (stream caps), tag (a tag's volume quotas)",
    labelNames: ['scope'] as const,
  });
  for (const scope of ['key', 'address', 'streams', 'exports', 'tag'] satisfies RateLimitScope[])
    rateLimitRejections.inc({ scope }, 0);

  return {
    registry,
    counter,
    gauge,
    histogram,
    gaugeOf,
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    http,
    ingest,
    rateLimitRejections,
  };
}
