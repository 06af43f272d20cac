// One TypeBox schema per option group gives both the TypeScript type (Static<>)
// and the shape check, so the known keys are never written twice. A schema
// carries the text of its own problem (`problem`, e.g. "must be true or false")
// and an object the words for a key it does not know (`unknownKey`); the first
// error found becomes a message naming the option and saying what to write.
import type { TSchema, TUnsafe } from '@sinclair/typebox'
import type { ValueError } from '@sinclair/typebox/errors'
// TypeCompiler rather than ajv: the schemas hold functions, classes and RegExps (no JSON), and its errors carry paths we walk back to the option.
import { Type, TypeCompiler, ValueErrorType } from './typebox.js'
import { closestPath } from './suggest.js'

/** How the check reached a key: an object's property, a record's entry, or a list's item. */
export interface OptionStep { key: string, via: 'property' | 'entry' | 'item' }

export interface OptionProblem {
  kind: 'unknown' | 'invalid'
  /** From the group's root to the option at fault; empty for the value as a whole. */
  path: OptionStep[]
  /** What to change, e.g. 'must be true or false (got "yes")' or 'is not a field option (known: …)'. */
  problem: string
}

/**
 * A schema whose checked shape TypeScript would type too loosely or too
 * strictly (functions, classes, readonly lists, RegExps, TypeBox schemas):
 * the check is `schema`'s, the type is T.
 */
export function typed<T> (schema: TSchema): TUnsafe<T> {
  return Type.Unsafe<T>(schema)
}

/** The keys an object schema knows, in declaration order. */
export function knownKeys (schema: TSchema): string[] {
  return Object.keys((schema as { properties?: object }).properties ?? {})
}

/** Compiles the schema once; the checker answers the first problem, or undefined when the value fits. */
export function optionChecker (schema: TSchema): (value: unknown) => OptionProblem | undefined {
  const compiled = TypeCompiler.Compile(schema)
  return (value) => {
    if (compiled.Check(value)) return undefined
    const errors = [...compiled.Errors(value)]
    // An unknown key first: it is usually a misspelling, and then the "wrong value" is only a consequence.
    const error = errors.find((e) => e.type === ValueErrorType.ObjectAdditionalProperties) ?? errors[0]
    return explain(schema, value, error)
  }
}

function explain (root: TSchema, value: unknown, error: ValueError): OptionProblem {
  const keys = error.path.split('/').slice(1).map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'))
  const unknown = error.type === ValueErrorType.ObjectAdditionalProperties
  const steps: OptionStep[] = []
  let schema: TSchema = root
  let current: unknown = value
  let annotated = { depth: 0, schema: root, value }
  for (const key of unknown ? keys.slice(0, -1) : keys) {
    const next = child(schema, key)
    if (!next) break
    steps.push({ key, via: next.via })
    schema = next.schema
    current = typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[key] : undefined
    if (typeof schema.problem === 'string') annotated = { depth: steps.length, schema, value: current }
  }
  if (unknown) {
    const key = keys[keys.length - 1]
    const word = typeof schema.unknownKey === 'string' ? schema.unknownKey : 'is not a known option'
    const known = knownKeys(schema)
    // A misspelt key names the one meant, by the same closeness rule as "did you mean" for routes.
    const closest = closestPath(key, known)
    const hint = closest === undefined ? '' : `; did you mean "${closest}"?`
    return { kind: 'unknown', path: [...steps, { key, via: 'property' }], problem: `${word}${hint} (known: ${known.join(', ')})` }
  }
  const problem = typeof annotated.schema.problem === 'string' ? annotated.schema.problem : error.message.toLowerCase()
  // `secret` options (keys) are never echoed into logs.
  const got = annotated.schema.secret === true ? '' : ` (got ${shown(annotated.value)})`
  return { kind: 'invalid', path: steps.slice(0, annotated.depth), problem: `${problem}${got}` }
}

function child (schema: TSchema, key: string): { schema: TSchema, via: OptionStep['via'] } | undefined {
  const properties = schema.properties as Record<string, TSchema> | undefined
  if (properties && Object.hasOwn(properties, key)) return { schema: properties[key], via: 'property' }
  const patterns = schema.patternProperties as Record<string, TSchema> | undefined
  if (patterns) return { schema: Object.values(patterns)[0], via: 'entry' }
  if (schema.type === 'array' && schema.items) return { schema: schema.items as TSchema, via: 'item' }
  return undefined
}

/** The offending value, short enough for a boot message. */
function shown (value: unknown): string {
  if (typeof value === 'function') return value.name ? `${value.name} (a function)` : 'a function'
  if (typeof value === 'symbol' || typeof value === 'bigint' || value === undefined) return String(value)
  if (value instanceof RegExp) return String(value)
  let text: string
  try { text = JSON.stringify(value) } catch { text = String(value) }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

/** "a.b[0].c" — how @CloudFunction and @ParseField messages name a nested option. */
export function dottedName (path: OptionStep[]): string {
  return path.map((step, i) => step.via === 'item' ? `[${step.key}]` : i === 0 ? step.key : `.${step.key}`).join('')
}
