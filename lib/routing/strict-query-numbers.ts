// A query string's numbers, read strictly: decimal text of a finite number
// ("20", "-1.5", "2e3"), nothing else. ajv's conversion would read " " (%20) and
// "" as 0, "0x10" as 16 and "1e400" as Infinity; such a value is left for the
// validator to refuse, naming the field ("querystring/limit must be number").
type Schema = { type?: unknown, properties?: Record<string, Schema>, items?: Schema }

const DECIMAL = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

/** A refused value ajv cannot convert to a number: the type check then fails as it should. */
const NOT_A_NUMBER = Object.freeze({})

/** The names of the schema's number fields (and of arrays of numbers), or undefined when it has none. */
export function numberFields (schema: unknown): { scalars: string[], lists: string[] } | undefined {
  const properties = (schema as Schema | undefined)?.properties ?? {}
  const scalars = Object.keys(properties).filter((name) => isNumeric(properties[name]))
  const lists = Object.keys(properties).filter((name) => properties[name].type === 'array' && isNumeric(properties[name].items))
  return scalars.length + lists.length > 0 ? { scalars, lists } : undefined
}

/** Converts the strict numbers of a parsed query string in place; the rest become unconvertible. */
export function readNumbers (query: unknown, fields: { scalars: string[], lists: string[] }): void {
  if (!query || typeof query !== 'object') return
  const values = query as Record<string, unknown>
  for (const name of fields.scalars) {
    const value = values[name]
    // Repeated (?limit=1&limit=2): ajv's 'array' conversion takes a single item; the rule holds for it too.
    if (Array.isArray(value)) values[name] = value.map(strictNumber)
    else if (value !== undefined) values[name] = strictNumber(value)
  }
  for (const name of fields.lists) {
    const value = values[name]
    if (Array.isArray(value)) values[name] = value.map(strictNumber)
    else if (value !== undefined) values[name] = strictNumber(value)
  }
}

function strictNumber (value: unknown): unknown {
  if (typeof value !== 'string') return value
  if (!DECIMAL.test(value)) return NOT_A_NUMBER
  const number = Number(value)
  return Number.isFinite(number) ? number : NOT_A_NUMBER
}

function isNumeric (schema: Schema | undefined): boolean {
  return schema?.type === 'number' || schema?.type === 'integer'
}
