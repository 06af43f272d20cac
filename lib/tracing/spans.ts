// The kit's own spans (the `tracing` option): one per declared call, named
// after the function, and one per transaction inside it. They go to whatever
// tracer provider the application registered (@opentelemetry/api is a no-op
// without one), so database spans from the pg / mongodb instrumentations nest
// under them. @fastify/otel (host/tracing.ts) adds the request spans around.
import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api'
import { currentKitState, statePart } from '../kit-state.js'

export const tracingPart = statePart('tracing', () => ({ on: false }))

const tracer = () => trace.getTracer('fastify-parse-kit')

/** Runs `body` in an active span when the running kit traces; a body that returns a value (not a promise) stays synchronous. */
export function inSpan<T> (name: string, attributes: Attributes, body: (span?: Span) => T): T {
  if (!currentKitState().get(tracingPart).on) return body()
  return tracer().startActiveSpan(name, { attributes }, (span) => {
    try {
      const result = body(span)
      if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
        return (result as unknown as Promise<unknown>).then(
          (value) => { span.end(); return value },
          (error: unknown) => { failed(span, error); throw error }
        ) as T
      }
      span.end()
      return result
    } catch (error) {
      failed(span, error)
      throw error
    }
  })
}

function failed (span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
  span.end()
}
