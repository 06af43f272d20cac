// Parse's LiveQuery matches each event against every subscription's `where` in
// memory, reading each operator's value as its shape: `{"$in": null}`, `{"$nin": 5}`,
// `{"$nearSphere": null}`, `{"$within": {"$box": null}}` are accepted at subscribe
// and then throw on every event of the class (one error line per event per such
// subscription, and the subscriber never hears anything). They are refused at
// subscribe instead, naming the operator.
// `$regex` is refused too unless liveQuery.allowRegex is on: Parse runs each
// subscription's pattern against every event of its class on the event loop
// (up to its regexTimeout, 100 ms, per pattern and event), so a client with a
// few slow patterns (`(a+)+b$`) could hold the server for seconds per save.

import { isJsonObject } from './json-object.js'

const LISTS = new Set(['$in', '$nin', '$all', '$containedBy'])
const OBJECTS = new Set(['$nearSphere', '$within', '$geoWithin', '$geoIntersects', '$select', '$dontSelect', '$inQuery', '$notInQuery'])
const LOGICAL = new Set(['$or', '$and', '$nor'])
const BOX = '$box'
const POLYGON = '$polygon'
const CENTER_SPHERE = '$centerSphere'
/** As deep as the gate walks a body (body-depth.ts). */
const MAX_DEPTH = 64

export interface WhereRules {
  /** liveQuery.allowRegex */
  allowRegex: boolean
}

const REGEX_REFUSAL = '$regex is not accepted in a subscription: each pattern runs against every event of the class on the server\'s event loop. ' +
  'Match the text in the app, or set the kit\'s liveQuery.allowRegex: true to accept it'

/** Why LiveQuery's matcher cannot (or, for $regex, may not) evaluate this subscription's where, or undefined. */
export function subscriptionWhereProblem (where: unknown, rules: WhereRules, depth = 0): string | undefined {
  if (!isJsonObject(where) || depth > MAX_DEPTH) return undefined // Parse refuses a where that is no object
  for (const [key, value] of Object.entries(where)) {
    if (LOGICAL.has(key)) {
      if (!Array.isArray(value) || !value.every(isJsonObject)) return `${key} takes a list of conditions (JSON objects)`
      for (const inner of value) {
        const problem = subscriptionWhereProblem(inner, rules, depth + 1)
        if (problem) return problem
      }
      continue
    }
    if (!isJsonObject(value)) continue
    for (const [op, argument] of Object.entries(value)) {
      if (op === '$regex' && !rules.allowRegex) return `${key}: ${REGEX_REFUSAL}`
      if (LISTS.has(op) && !Array.isArray(argument)) return `${key}: ${op} takes a list (got ${describe(argument)})`
      if (OBJECTS.has(op) && !isJsonObject(argument)) return `${key}: ${op} takes an object (got ${describe(argument)})`
      if (op === '$within' && !boxReadable((argument as Record<string, unknown>)[BOX])) return `${key}: $within takes {"$box": [two GeoPoints]}`
      if (op === '$geoWithin' && !geoWithinReadable(argument as Record<string, unknown>)) {
        return `${key}: $geoWithin takes {"$polygon": [GeoPoints]} or {"$centerSphere": [a GeoPoint, a distance]}`
      }
    }
  }
  return undefined
}

function boxReadable (box: unknown): boolean {
  return Array.isArray(box) && box.length === 2 && box.every(isJsonObject)
}

function geoWithinReadable (argument: Record<string, unknown>): boolean {
  const polygon = argument[POLYGON]
  const centerSphere = argument[CENTER_SPHERE]
  if (POLYGON in argument) return Array.isArray(polygon) && polygon.every(isJsonObject)
  if (CENTER_SPHERE in argument) return Array.isArray(centerSphere) && isJsonObject(centerSphere[0])
  return true
}

function describe (value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value
}
