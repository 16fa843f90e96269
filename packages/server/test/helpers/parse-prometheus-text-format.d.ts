declare module 'parse-prometheus-text-format' {
  /** Parses the Prometheus text format into prom2json-shaped families (the package ships no types). */
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
