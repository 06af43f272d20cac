// A queued run's params went through JSON on their way into the queue: a
// Date its @Job declares (Type.Date) came back as ISO text, so a job written
// to its declaration (`request.params.at.getTime()`) failed on every attempt
// and ended dead. They are made Dates again, as the declaration says.
import type { TObject } from '@sinclair/typebox'
import { Value } from '../typebox.js'

/** Brings the declared Date params of a queued run back from ISO text; undefined when the declaration has no Date. */
export function queuedDateReviver (schema: TObject | undefined): ((params: Record<string, unknown>) => Record<string, unknown>) | undefined {
  if (!schema || !holdsDate(schema, 0)) return undefined
  return (params) => Value.Convert(schema, params) as Record<string, unknown>
}

/** Whether a Date is declared anywhere in the schema (a bounded walk: a schema is small and plain). */
function holdsDate (schema: unknown, depth: number): boolean {
  if (schema === null || typeof schema !== 'object' || depth > 32) return false
  if ((schema as { type?: unknown }).type === 'Date') return true
  return Object.values(schema).some((child) => holdsDate(child, depth + 1))
}
