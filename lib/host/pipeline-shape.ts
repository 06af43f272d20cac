// Parse Server's aggregate route reads its pipeline before its own error
// handling starts: a stage that is null (`pipeline=[null]`) or a `$group` that
// is null throws a TypeError there, a 500. The mount refuses them first, in the
// kit's {code, error} shape. What Parse refuses itself (a stage with no key or
// two, an unknown name, `$group` without `_id`) stays its answer.

import { isJsonObject } from './json-object.js'

const AGGREGATE_PATH = /^\/aggregate\/[^/]+\/?$/i
const GROUP = '$group'

/** Why Parse cannot read this aggregate's pipeline, or undefined. `method` is the one Parse runs (after `_method`). */
export function pipelineProblem (method: string, path: string, query: unknown, body: unknown): string | undefined {
  if ((method !== 'GET' && method !== 'HEAD') || !AGGREGATE_PATH.test(path)) return undefined
  // As Parse reads it: the body, then every query value (JSON-parsed when it parses) over it;
  // the pipeline is `pipeline`, or when that is missing the whole of it.
  const merged: Record<string, unknown> = { ...(isJsonObject(body) ? body : {}) }
  if (isJsonObject(query)) for (const [name, value] of Object.entries(query)) merged[name] = parsed(value)
  const pipeline = merged.pipeline ? merged.pipeline : merged // Parse's own test: any falsy pipeline means the body
  const stages = Array.isArray(pipeline)
    ? pipeline as unknown[]
    : isJsonObject(pipeline) ? Object.entries(pipeline).filter(([, value]) => value !== undefined).map(([name, value]) => ({ [name]: value })) : []
  for (const [index, stage] of stages.entries()) {
    if (!isJsonObject(stage)) return `pipeline stage ${index} must be an object with one key, such as {"$match": {…}} (got ${describe(stage)})`
    if (GROUP in stage && !isJsonObject(stage[GROUP])) return `$group must be an object with an _id, such as {"_id": "$field"} (got ${describe(stage[GROUP])})`
  }
  return undefined
}

function parsed (value: unknown): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

function describe (value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
}
