// Dates in a declared function's params. JSON has no date: a plain client
// sends ISO 8601 text, while Parse.Cloud.run sends a JS Date as Parse's
// encoding, {"__type":"Date","iso":"…"}, which Parse's functions router decodes
// into a Date before the handler runs. Here both reach the handler as a Date:
// - a declared `Date` field takes either form; the schema checks the ISO text
//   (Parse's encoding is unwrapped before validation), the handler gets a Date;
// - any other value in Parse's encoding, at any depth, is decoded as Parse's
//   router decodes it.
import type { preHandlerHookHandler } from 'fastify'
import Parse from 'parse/node'
import { KitError } from '../errors.js'
import { fieldTypeName, type CloudFunctionOptions } from './options.js'

interface ParseDate { __type: 'Date', iso: string }

function isParseDate (value: unknown): value is ParseDate {
  return value !== null && typeof value === 'object' && (value as { __type?: unknown }).__type === 'Date' && typeof (value as { iso?: unknown }).iso === 'string'
}

/** A function without declared `Date` fields: one list for all of them (read only). */
const NO_DATES: string[] = Object.freeze([]) as unknown as string[]

/** The names of a function's declared `Date` fields (a loop, no list or closure made per function without any). */
export function dateFields (options: CloudFunctionOptions): string[] {
  const fields = options.validation?.fields
  if (fields === undefined) return NO_DATES
  let dates: string[] | undefined
  for (const name in fields) {
    if (!Object.hasOwn(fields, name)) continue
    const field = fields[name]
    if (!field.options && fieldTypeName(field.type) === 'Date') (dates ??= []).push(name)
  }
  return dates ?? NO_DATES
}

/** preValidation of a body: a declared Date field sent in Parse's encoding is validated as its ISO text. */
export function parseDatesAsIso (names: string[]): preHandlerHookHandler {
  return (request, _reply, done) => {
    const body = request.body as Record<string, unknown>
    for (const name of names) {
      const value = body[name]
      if (isParseDate(value)) body[name] = value.iso
    }
    done()
  }
}

/** Declared Date fields (validated ISO text by now) become Dates; Parse's date encoding anywhere else is decoded. */
export function decodeDates (params: Record<string, unknown>, declared: string[]): void {
  for (const name of Object.keys(params)) {
    const value = params[name]
    if (declared.includes(name) && typeof value === 'string') params[name] = new Date(value)
    else if (value !== null && typeof value === 'object') params[name] = decoded(value, name)
  }
}

/** A Date from Parse's encoding; an iso that is no date is the caller's mistake (an Invalid Date failed the answer with a 500). */
function dateOf ({ iso }: ParseDate, name: string): Date {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) throw new KitError(Parse.Error.VALIDATION_ERROR, `${name} holds a Date whose iso is not a date (got ${JSON.stringify(iso).slice(0, 80)})`, 400)
  return date
}

function decoded (value: object, name: string): unknown {
  if (isParseDate(value)) return dateOf(value, name)
  // Only plain JSON reaches here (a parsed body or query string): arrays and objects, walked in
  // place with a list rather than recursion, as a client may nest as deep as the body limit allows.
  const pending = [value as Record<string, unknown>]
  for (let container = pending.pop(); container; container = pending.pop()) {
    for (const key of Object.keys(container)) {
      const inner = container[key]
      if (inner === null || typeof inner !== 'object') continue
      if (isParseDate(inner)) container[key] = dateOf(inner, name)
      else pending.push(inner as Record<string, unknown>)
    }
  }
  return value
}
