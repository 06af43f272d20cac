// The parser ships no types: what the metrics test reads of its result.
declare module 'parse-prometheus-text-format' {
  interface PrometheusSample { labels?: Record<string, string>, value?: string, count?: string, sum?: string, buckets?: Record<string, string> }
  interface PrometheusFamily { name: string, help: string, type: string, metrics: PrometheusSample[] }
  export default function parsePrometheusTextFormat (text: string): PrometheusFamily[]
}
