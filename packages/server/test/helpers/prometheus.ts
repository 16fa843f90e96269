import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One parsed sample of the Prometheus text format (prom2json's shape). */
interface ParsedSample {
  labels?: Record<string, string>;
  value?: string;
  count?: string;
  sum?: string;
  buckets?: Record<string, string>;
}
interface ParsedFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: ParsedSample[];
}

export interface Scrape {
  families: ParsedFamily[];
  family(name: string): ParsedFamily | undefined;
  /**
   * The value of the sample of `name` whose labels include `labels` (for a histogram: its count);
   * the sum over every matching sample; 0 when none matches.
   */
  value(name: string, labels?: Record<string, string>): number;
}

/**
 * Parses a Prometheus text exposition with parse-prometheus-text-format (a parser we did not write;
 * it throws on a malformed line). Its 1.1.1 merges the series of a labelled histogram into one and
 * drops their labels, count and sum, so a histogram's value is read from its `_count` lines, parsed
 * on their own as a counter by the same parser.
 */
export function parseMetrics(text: string): Scrape {
  const families = parsePrometheusTextFormat(text) as ParsedFamily[];
  const family = (name: string) => families.find((f) => f.name === name);
  const histogramCounts = (name: string) => {
    const lines = text.split('\n').filter((line) => line.startsWith(`${name}_count`));
    const parsed = parsePrometheusTextFormat(`# TYPE ${name}_count counter\n${lines.join('\n')}\n`) as ParsedFamily[];
    return parsed[0]?.metrics ?? [];
  };
  return {
    families,
    family,
    value: (name, labels = {}) => {
      const found = family(name);
      if (!found) return 0;
      const samples = found.type === 'HISTOGRAM' ? histogramCounts(name) : found.metrics;
      let total = 0;
      for (const sample of samples) {
        const own = sample.labels ?? {};
        if (!Object.entries(labels).every(([k, v]) => own[k] === v)) continue;
        total += Number(sample.value ?? sample.count ?? 0);
      }
      return total;
    },
  };
}
