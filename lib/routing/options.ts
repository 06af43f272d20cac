// @CloudFunction options and their checks (at import, naming the function and option).
import type { Static, TSchema } from '@sinclair/typebox'
import { KindGuard, Type } from '../typebox.js'
import { RouteOptionInvalidError, RouteOptionUnknownError } from '../errors.js'
import { dottedName, optionChecker, typed, type OptionProblem } from '../option-schema.js'

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
export type HttpMethod = typeof HTTP_METHODS[number]

const TYPE_NAMES = ['String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'Any'] as const
/** A validation field's type: a constructor (String, Number…) as in Parse Cloud validators, or its name. */
export type FieldTypeName = typeof TYPE_NAMES[number]
export type FieldTypeRef = FieldTypeName | StringConstructor | NumberConstructor | BooleanConstructor | DateConstructor | ObjectConstructor | ArrayConstructor

const flag = Type.Boolean({ problem: 'must be true or false' })
/** An operationId a client generator can turn into a method name as it is. */
const OPERATION_ID = /^[A-Za-z_][A-Za-z0-9_]*$/
const words = Type.String({ problem: 'must be text' })

const fieldType = () => typed<FieldTypeRef>(Type.Union([...TYPE_NAMES.map((name) => Type.Literal(name)), Type.Function([], Type.Unknown())], {
  problem: `must be one of ${TYPE_NAMES.join(', ')}`
}))

/** What every field takes; a field inside an object (`properties`) takes these alone. */
const fieldBasics = {
  // A constructor passes the shape check; its name is checked against TYPE_NAMES below.
  type: Type.Optional(fieldType()),
  required: Type.Optional(flag),
  /** Allowed values. */
  options: Type.Optional(typed<readonly unknown[]>(Type.Array(Type.Unknown(), { minItems: 1, problem: 'must be a non-empty list of allowed values' }))),
  default: Type.Optional(Type.Unknown()),
  description: Type.Optional(words),
  /** String: length bounds. */
  maxLength: Type.Optional(Type.Integer({ minimum: 0, problem: 'must be a whole number ≥ 0' })),
  minLength: Type.Optional(Type.Integer({ minimum: 0, problem: 'must be a whole number ≥ 0' })),
  /** String: a regular expression (JSON Schema `pattern`: it matches anywhere unless anchored). */
  pattern: Type.Optional(Type.String({ problem: 'must be a regular expression as text' })),
  /** Number: bounds, and whole numbers only. */
  min: Type.Optional(Type.Number({ problem: 'must be a finite number' })),
  max: Type.Optional(Type.Number({ problem: 'must be a finite number' })),
  integer: Type.Optional(flag),
  /** Array: the type of every element (ids: String). */
  items: Type.Optional(fieldType())
}

/** A field of an object field (its `properties`, or those of a list's items): one level deep. */
export const NestedFieldSchema = Type.Object(fieldBasics, {
  additionalProperties: false,
  unknownKey: 'is not supported',
  problem: 'must be { type?, required?, options?, default?, description?, maxLength?, minLength?, pattern?, min?, max?, integer?, items? }'
})

const NestedFields = Type.Record(Type.String(), NestedFieldSchema, { problem: 'must map field names to { type?, required?, … }' })

/** One field of `validation.fields` (or of `returns` in the same shorthand). */
export const ValidationFieldSchema = Type.Object({
  ...fieldBasics,
  /** Object: the fields it has (others pass through), each checked and documented. */
  properties: Type.Optional(NestedFields),
  /** Array: the type of every element, or objects with these `properties`. */
  items: Type.Optional(Type.Union([
    fieldType(),
    Type.Object({ properties: NestedFields, description: Type.Optional(words) }, { additionalProperties: false, unknownKey: 'is not supported' })
  ], { problem: `must be one of ${TYPE_NAMES.join(', ')}, or { properties, description? } for a list of objects` }))
}, { additionalProperties: false, unknownKey: 'is not supported', problem: 'must be { type?, required?, options?, default?, description?, maxLength?, minLength?, pattern?, min?, max?, integer?, items?, properties? }' })

export type ValidationField = Static<typeof ValidationFieldSchema>
export type NestedField = Static<typeof NestedFieldSchema>
/** A list's items given as objects with their fields. */
export type ItemObject = { properties: Record<string, NestedField>, description?: string }

export function isItemObject (items: ValidationField['items']): items is ItemObject {
  return typeof items === 'object' && items !== null && 'properties' in items
}

const FieldsSchema = Type.Record(Type.String(), ValidationFieldSchema, { problem: 'must map field names to { type?, required?, options?, default? }' })

/** @CloudFunction's rateLimit. */
export const RateLimitSchema = Type.Object({
  windowMs: Type.Integer({ minimum: 1, problem: 'must be a whole number of milliseconds ≥ 1' }),
  max: Type.Integer({ minimum: 1, problem: 'must be a whole number of calls ≥ 1' })
}, { additionalProperties: false, unknownKey: 'is not supported', problem: 'must be { windowMs: positive integer, max: positive integer }' })

/** @CloudFunction's options: their type (CloudFunctionOptions) and their shape check come from here. */
export const CloudFunctionOptionsSchema = Type.Object({
  /** Verbs this function answers; others get 405. Default ['POST']. Each verb is checked against HTTP_METHODS below, naming the wrong one. */
  methods: Type.Optional(typed<readonly HttpMethod[]>(Type.Array(Type.String(), { minItems: 1, problem: 'must be a non-empty list of HTTP verbs' }))),
  description: Type.Optional(words),
  /** Refuse callers without a session (the master key passes). */
  requiresAuth: Type.Optional(flag),
  /** Only a caller presenting the master key passes (sessions and roles do not). */
  requireMaster: Type.Optional(flag),
  validation: Type.Optional(Type.Object({
    requireUser: Type.Optional(flag),
    fields: Type.Optional(FieldsSchema)
  }, { additionalProperties: false, unknownKey: 'is not supported', problem: 'must be { requireUser?, fields? }' })),
  /**
   * The answer's schema (TypeBox, or fields in the validation shorthand):
   * Fastify serialises with it (fields it does not list are not sent), the
   * API document shows it as the 200 response, and the handler's return type
   * is checked against it. Fields are checked below (a TypeBox schema is told by its Kind).
   */
  returns: Type.Optional(typed<TSchema | Record<string, ValidationField>>(Type.Object({}, { problem: 'must be a TypeBox schema or { field: { type, required? } }' }))),
  /** Roles checked before the body runs (inherited roles count). */
  // An empty list would check nothing (with requireAllRoles, "every one of none"): the function was open to anyone.
  requireRoles: Type.Optional(typed<readonly string[]>(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, problem: 'must be a list of role names, at least one (an empty list checks nothing: leave the option out)' }))),
  /** true: every listed role; false (default): any of them. */
  requireAllRoles: Type.Optional(flag),
  /** Role cache lifetime for this function, overriding configureRoleCache; 0 never caches. */
  roleCacheMs: Type.Optional(Type.Integer({ minimum: 0, problem: 'must be a whole number of milliseconds ≥ 0' })),
  /** At most `max` calls per client address in each window of `windowMs` milliseconds (429 beyond). */
  rateLimit: Type.Optional(RateLimitSchema),
  /** Replaces the default refusal text (authentication and role checks). */
  customErrorMessage: Type.Optional(words),
  /** What the API document says of this function (the route itself is unchanged). */
  swagger: Type.Optional(Type.Object({
    summary: Type.Optional(words),
    description: Type.Optional(words),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { problem: 'must be a list of tag names' })),
    /** The operation's id in the document (default: the prefix and the method name, e.g. notesCreateNote). */
    operationId: Type.Optional(Type.String({ pattern: OPERATION_ID.source, problem: 'must be letters, digits and _ (a name a generated client can use as a method)' })),
    /** Marks the operation as deprecated in the document. */
    deprecated: Type.Optional(flag),
    /** Examples shown in the document: the parameters of a call (body or query string) and its 200 answer. */
    examples: Type.Optional(Type.Object({
      request: Type.Optional(typed<Record<string, unknown>>(Type.Record(Type.String(), Type.Unknown(), { problem: 'must be an object of parameters' }))),
      answer: Type.Optional(Type.Unknown())
    }, { additionalProperties: false, unknownKey: 'is not an example', problem: 'must be { request?, answer? }' })),
    /**
     * Status → JSON schema with a `description` (a Fastify `response` schema). The success answer is
     * 200 (what the route answers); an error status with only a description gets the shared error body.
     */
    responses: Type.Optional(Type.Record(Type.String(), Type.Object({}, { problem: 'must be a JSON schema with a description' }), { problem: 'must map statuses to JSON schemas' }))
  }, { additionalProperties: false, unknownKey: 'is not a swagger option', problem: 'must be { summary?, description?, tags?, operationId?, deprecated?, examples?, responses? }' }))
}, { additionalProperties: false, unknownKey: 'is not a @CloudFunction option', problem: 'must be an object' })

export type CloudFunctionOptions = Static<typeof CloudFunctionOptionsSchema>

const checkShape = optionChecker(CloudFunctionOptionsSchema)
const checkFieldsShape = optionChecker(FieldsSchema)

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
  const fail = (option: string, problem: string, kind: OptionProblem['kind'] = 'invalid'): never => {
    const message = option === '' ? `${where}: options ${problem}` : `${where}: option "${option}" ${problem}`
    throw kind === 'unknown' ? new RouteOptionUnknownError(message) : new RouteOptionInvalidError(message)
  }
  const shape = checkShape(options)
  if (shape) fail(dottedName(shape.path), shape.problem, shape.kind)
  for (const method of options.methods ?? []) {
    if (!HTTP_METHODS.includes(method)) fail('methods', `has "${method}"; use ${HTTP_METHODS.join(', ')}`)
  }
  if (options.returns !== undefined && !KindGuard.IsSchema(options.returns)) {
    const fields = checkFieldsShape(options.returns)
    if (fields) fail(dottedName([{ key: 'returns', via: 'property' }, ...fields.path]), fields.problem, fields.kind)
    checkTypeNames('returns', options.returns, fail)
  }
  checkTypeNames('validation.fields', options.validation?.fields ?? {}, fail)
  for (const status of Object.keys(options.swagger?.responses ?? {})) {
    const problem = responseStatusProblem(status)
    if (problem) fail(`swagger.responses.${status}`, problem)
  }
}

/**
 * A declared function answers 200 on success, so the document may say no other success status;
 * error statuses (4xx, 5xx) and `default` describe refusals the handler throws.
 */
function responseStatusProblem (status: string): string | undefined {
  if (status === '200' || status === 'default' || /^[45]\d\d$/.test(status)) return undefined
  if (/^[123]\d\d$/.test(status)) return 'is not what the route answers: a declared function answers 200 on success; document its answer under 200'
  return 'is not an HTTP status: use 200, a 4xx or 5xx status, or default'
}

/** A constructor passed as a field type must be one of the supported ones (String, Number…). */
function checkTypeNames (where: string, fields: Record<string, ValidationField>, fail: (option: string, problem: string) => never): void {
  for (const [name, field] of Object.entries(fields)) {
    if (!(TYPE_NAMES as readonly string[]).includes(fieldTypeName(field.type))) fail(`${where}.${name}.type`, `must be one of ${TYPE_NAMES.join(', ')}`)
    if (isItemObject(field.items)) checkTypeNames(`${where}.${name}.items.properties`, field.items.properties, fail)
    else if (field.items !== undefined && !(TYPE_NAMES as readonly string[]).includes(fieldTypeName(field.items))) fail(`${where}.${name}.items`, `must be one of ${TYPE_NAMES.join(', ')}`)
    if (field.properties) checkTypeNames(`${where}.${name}.properties`, field.properties, fail)
    if (field.pattern !== undefined) {
      try {
        new RegExp(field.pattern, 'u') // eslint-disable-line no-new
      } catch (error) {
        fail(`${where}.${name}.pattern`, `is not a valid regular expression: ${(error as Error).message}`)
      }
    }
    // The schema errors a field could carry into its JSON schema, refused here, since the schema
    // itself is compiled only on the function's first call (routing/lazy-validation.ts): an allowed
    // value or a default JSON cannot hold (undefined, a function), and a repeated allowed value.
    const unwritable = field.options?.findIndex((value) => !isJsonValue(value)) ?? -1
    if (unwritable >= 0) fail(`${where}.${name}.options`, `item ${unwritable} is no JSON value (undefined, a function, a symbol or a bigint, at any depth)`)
    if (field.default !== undefined && !isJsonValue(field.default)) fail(`${where}.${name}.default`, 'is no JSON value (a function, a symbol, a bigint, or undefined inside it)')
    const repeated = field.options?.find((value, i) => field.options!.findIndex((other) => sameValue(other, value)) !== i)
    if (repeated !== undefined) fail(`${where}.${name}.options`, `lists ${JSON.stringify(repeated)} twice`)
  }
}

/** Equal as JSON Schema compares enum items (deep, by value, whatever the order of an object's keys). */
function sameValue (a: unknown, b: unknown): boolean {
  return a === b || canonical(a) === canonical(b)
}

function canonical (value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => item !== null && typeof item === 'object' && !Array.isArray(item)
    ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
    : item)
}

function isJsonValue (value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return true
  if (typeof value !== 'object') return false
  return Object.values(value).every(isJsonValue)
}
