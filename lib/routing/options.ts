// @CloudFunction options and their checks (at import, naming the function and option).
import { KindGuard, type TSchema } from '@sinclair/typebox'

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** A validation field's type: a constructor (String, Number…) as in Parse Cloud validators, or its name. */
export type FieldTypeName = 'String' | 'Number' | 'Boolean' | 'Date' | 'Object' | 'Array' | 'Any'
export type FieldTypeRef = FieldTypeName | StringConstructor | NumberConstructor | BooleanConstructor | DateConstructor | ObjectConstructor | ArrayConstructor

export interface ValidationField {
  type?: FieldTypeRef
  required?: boolean
  /** Allowed values. */
  options?: readonly unknown[]
  default?: unknown
  description?: string
}

export interface CloudFunctionOptions {
  /** Verbs this function answers; others get 405. Default ['POST']. */
  methods?: readonly HttpMethod[]
  description?: string
  /** Refuse callers without a session (the master key passes). */
  requiresAuth?: boolean
  /** Only a caller presenting the master key passes (sessions and roles do not). */
  requireMaster?: boolean
  validation?: {
    requireUser?: boolean
    fields?: Record<string, ValidationField>
  }
  /**
   * The answer's schema (TypeBox, or fields in the validation shorthand):
   * Fastify serialises with it (fields it does not list are not sent), the
   * API document shows it as the 200 response, and the handler's return type
   * is checked against it.
   */
  returns?: TSchema | Record<string, ValidationField>
  /** Roles checked before the body runs (inherited roles count). */
  requireRoles?: readonly string[]
  /** true: every listed role; false (default): any of them. */
  requireAllRoles?: boolean
  /** Role cache lifetime for this function, overriding configureRoleCache; 0 never caches. */
  roleCacheMs?: number
  rateLimit?: { windowMs: number, max: number }
  /** Replaces the default refusal text (authentication and role checks). */
  customErrorMessage?: string
  swagger?: { summary?: string, description?: string, tags?: string[], responses?: Record<string, unknown> }
}

export const HTTP_METHODS: HttpMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']
const OPTION_KEYS = new Set(['methods', 'description', 'requiresAuth', 'requireMaster', 'validation', 'requireRoles', 'requireAllRoles', 'roleCacheMs', 'rateLimit', 'customErrorMessage', 'swagger', 'returns'])
const FIELD_KEYS = new Set(['type', 'required', 'options', 'default', 'description'])
const TYPE_NAMES: FieldTypeName[] = ['String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'Any']

export function fieldTypeName (type: FieldTypeRef | undefined): FieldTypeName {
  if (type === undefined) return 'Any'
  return typeof type === 'string' ? type : type.name as FieldTypeName
}

/**
 * Whether a function refuses callers without a session (the master key passes).
 * The enforcement (routing/register.ts) and the documented security (docs/security.ts) both ask here.
 */
export function needsSession (options: CloudFunctionOptions): boolean {
  return options.requiresAuth === true || options.validation?.requireUser === true || (options.requireRoles?.length ?? 0) > 0
}

export function checkCloudFunctionOptions (where: string, options: CloudFunctionOptions): void {
  const fail = (option: string, problem: string): never => { throw new Error(`${where}: option "${option}" ${problem}`) }
  if (typeof options !== 'object' || options === null) throw new Error(`${where}: options must be an object`)
  for (const key of Object.keys(options)) if (!OPTION_KEYS.has(key)) fail(key, `is not a @CloudFunction option (known: ${[...OPTION_KEYS].join(', ')})`)
  if (options.methods !== undefined) {
    if (!Array.isArray(options.methods) || options.methods.length === 0) fail('methods', 'must be a non-empty list of HTTP verbs')
    for (const method of options.methods) if (!HTTP_METHODS.includes(method)) fail('methods', `has "${method}"; use ${HTTP_METHODS.join(', ')}`)
  }
  for (const key of ['requiresAuth', 'requireMaster', 'requireAllRoles'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'boolean') fail(key, 'must be true or false')
  }
  if (options.requireRoles !== undefined && (!Array.isArray(options.requireRoles) || !options.requireRoles.every((r) => typeof r === 'string' && r !== ''))) {
    fail('requireRoles', 'must be a list of role names')
  }
  if (options.roleCacheMs !== undefined && !(Number.isInteger(options.roleCacheMs) && options.roleCacheMs >= 0)) fail('roleCacheMs', 'must be a whole number of milliseconds ≥ 0')
  if (options.rateLimit !== undefined) {
    const { windowMs, max } = options.rateLimit ?? {} as never
    if (!Number.isInteger(windowMs) || windowMs <= 0 || !Number.isInteger(max) || max <= 0) fail('rateLimit', 'must be { windowMs: positive integer, max: positive integer }')
  }
  for (const key of ['description', 'customErrorMessage'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'string') fail(key, 'must be text')
  }
  if (options.returns !== undefined) {
    if (typeof options.returns !== 'object' || options.returns === null) fail('returns', 'must be a TypeBox schema or { field: { type, required? } }')
    if (!KindGuard.IsSchema(options.returns)) checkFields('returns', options.returns as Record<string, ValidationField>, fail)
  }
  const validation = options.validation
  if (validation !== undefined) {
    if (typeof validation !== 'object' || validation === null) fail('validation', 'must be { requireUser?, fields? }')
    for (const key of Object.keys(validation)) if (key !== 'requireUser' && key !== 'fields') fail(`validation.${key}`, 'is not supported (known: requireUser, fields)')
    checkFields('validation.fields', validation.fields ?? {}, fail)
  }
}

function checkFields (where: string, fields: Record<string, ValidationField>, fail: (option: string, problem: string) => never): void {
  for (const [name, field] of Object.entries(fields)) {
    if (typeof field !== 'object' || field === null) fail(`${where}.${name}`, 'must be { type?, required?, options?, default? }')
    for (const key of Object.keys(field)) if (!FIELD_KEYS.has(key)) fail(`${where}.${name}.${key}`, `is not supported (known: ${[...FIELD_KEYS].join(', ')})`)
    if (!TYPE_NAMES.includes(fieldTypeName(field.type))) fail(`${where}.${name}.type`, `must be one of ${TYPE_NAMES.join(', ')}`)
    if (field.options !== undefined && (!Array.isArray(field.options) || field.options.length === 0)) fail(`${where}.${name}.options`, 'must be a non-empty list of allowed values')
    // The two schema errors a field could carry into its JSON schema: refused here, since the
    // schema itself is compiled only on the function's first call (routing/lazy-validation.ts).
    const repeated = field.options?.find((value, i) => field.options!.findIndex((other) => sameValue(other, value)) !== i)
    if (repeated !== undefined) fail(`${where}.${name}.options`, `lists ${JSON.stringify(repeated)} twice`)
    if (field.description !== undefined && typeof field.description !== 'string') fail(`${where}.${name}.description`, 'must be text')
  }
}

/** Equal as JSON Schema compares enum items (deep, by value). */
function sameValue (a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b)
}
