// The `tracing` option: @fastify/otel's request, hook and handler spans for
// every route registered after it, on the tracer provider the application
// registered (the kit bundles no SDK and no exporter). An application that
// registered @fastify/otel itself keeps its own; the kit adds only its spans
// (tracing/spans.ts): the declared call and its transaction.
import type { FastifyInstance } from 'fastify'
import { redactUrl } from './server-options.js'

export async function registerTracing (fastify: FastifyInstance, options: { metricsPath?: string }): Promise<void> {
  if (fastify.hasPlugin('@fastify/otel')) return
  const { FastifyOtelInstrumentation } = await import('@fastify/otel')
  const instrumentation = new FastifyOtelInstrumentation({
    // Scrapes are no requests worth a trace.
    ...(options.metricsPath ? { ignorePaths: (route: { url: string }) => route.url === options.metricsPath } : {}),
    // url.path is the whole request target: no password from GET /login?… in it (span-redaction.ts
    // does the same for every span, this one included, when the exporter is wrapped).
    requestHook: (span, request) => {
      const clean = redactUrl(request.url)
      if (clean !== request.url) span.setAttribute('url.path', clean)
    }
  })
  await fastify.register(instrumentation.plugin())
}
