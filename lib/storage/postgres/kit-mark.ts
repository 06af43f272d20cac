// The record the kit leaves on each index and CHECK it made, in the object's
// COMMENT: what it was made from, so the next boot knows whether it is still
// the one declared.
import type { WantedObject } from '../indexes/reconcile.js'

/** The record the kit leaves on what it made, in the object's COMMENT. */
const MARK = 'fastify-parse-kit '

export function markOf (object: WantedObject): string {
  return MARK + JSON.stringify({ definition: object.definition, rule: object.rule })
}

export function readMark (note: string | null): { definition: string, rule: string } | undefined {
  if (!note?.startsWith(MARK)) return undefined
  try {
    const mark = JSON.parse(note.slice(MARK.length)) as { definition?: unknown, rule?: unknown }
    return typeof mark.definition === 'string' ? { definition: mark.definition, rule: String(mark.rule ?? '') } : undefined
  } catch {
    return undefined
  }
}
