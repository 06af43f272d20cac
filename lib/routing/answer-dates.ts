// A `returns` schema that says a field is ISO 8601 text (`format: 'date-time'`)
// gets ISO text, whatever form the handler's value takes. fast-json-stringify
// writes a JS Date there itself, but a Date field of a Parse.Object comes out
// of its toJSON() in Parse's encoding, {"__type":"Date","iso":"…"}, which it
// cannot write (a 500). Before such an answer is serialised, each value in
// Parse's encoding at a date-time position is replaced by its `iso` (on copies:
// the handler's objects are left as they are). A schema without a date-time
// field is serialised as before, with no extra step.

type Schema = Record<string, unknown>
type Fix = (value: unknown) => unknown

function isParseDate (value: unknown): value is { __type: 'Date', iso: string } {
  return value !== null && typeof value === 'object' && (value as { __type?: unknown }).__type === 'Date' && typeof (value as { iso?: unknown }).iso === 'string'
}

const isoText: Fix = (value) => isParseDate(value) ? value.iso : value

/** The step for `schema`, or undefined when no date-time field is in it (objects' properties and arrays' items are followed). */
export function parseDatesToIso (schema: unknown): Fix | undefined {
  if (schema === null || typeof schema !== 'object') return undefined
  const { type, format, properties, items } = schema as Schema
  if (type === 'string' && format === 'date-time') return isoText
  if (type === 'array') {
    const item = parseDatesToIso(items)
    return item && ((value) => Array.isArray(value) ? value.map(item) : value)
  }
  if (type !== 'object' || properties === null || typeof properties !== 'object') return undefined
  const fixes = Object.entries(properties).flatMap(([name, property]) => {
    const fix = parseDatesToIso(property)
    return fix ? [[name, fix] as const] : []
  })
  if (fixes.length === 0) return undefined
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return value
    // The serialiser reads an object's toJSON() (a Parse.Object's: its REST JSON) in its place.
    const json = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON (): unknown }).toJSON() : value
    if (json === null || typeof json !== 'object') return json
    const fields = json as Record<string, unknown>
    let copy: Record<string, unknown> | undefined
    for (const [name, fix] of fixes) {
      if (!(name in fields)) continue
      const fixed = fix(fields[name])
      if (fixed !== fields[name]) (copy ??= { ...fields })[name] = fixed
    }
    return copy ?? value
  }
}
