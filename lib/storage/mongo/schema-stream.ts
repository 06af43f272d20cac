// With schema hooks (several instances), Parse's MongoDB adapter watches its
// schema collection with a change stream (parse/adapter-internals.ts) and listens only for
// 'change'. The stream reports its failures — a wait past `timeoutMS`, a lost
// server, a server without change streams — as an 'error' event, which unheard
// ends the process. The kit listens: the failed stream is dropped a moment
// later (Parse opens a new one on its next schema read) and Parse's schema
// cache is emptied, since a change may have been missed meanwhile: the next
// request reads the schema again, awaited (calling Parse's own change callback
// instead would start a reload nobody awaits, unhandled while the database is
// away). The pause keeps a stream that fails at once (a server that cannot
// watch) from looping.
import { isDatabaseUnavailable } from '../unavailable.js'
import { takeSchemaStreamSlot, type SchemaChangeStream as ChangeStream } from '../../parse/adapter-internals.js'

/** How long a failed stream stays in place before Parse may open the next one. */
const REOPEN_AFTER_MS = 1_000

export interface SchemaStreamEvents {
  /** The database could not be reached (the availability watch takes it from here). */
  outage (error: unknown): void
  /** One line for the log. */
  notice (line: string): void
  /** Forgets the schema Parse cached, so that it is read again. */
  forgetSchema (): void
}

export function guardSchemaStream (adapter: object, events: SchemaStreamEvents): void {
  let stream: ChangeStream | undefined
  let lastReason: string | undefined
  stream = takeSchemaStreamSlot(adapter, {
    get: () => stream,
    set (value: ChangeStream | undefined) {
      stream = value
      value?.on('error', (error) => {
        if (isDatabaseUnavailable(error)) events.outage(error)
        const reason = (error as Error)?.message ?? String(error)
        // One line per kind of failure, not one per reopened stream.
        if (reason !== lastReason) events.notice(`[fastify-parse-kit] MongoDB schema change stream failed (${reason}); Parse reloads its schema and watches again`)
        lastReason = reason
        value.close?.().catch(() => {})
        setTimeout(() => {
          if (stream !== value) return
          stream = undefined
          events.forgetSchema()
        }, REOPEN_AFTER_MS).unref()
      })
    }
  })
}
