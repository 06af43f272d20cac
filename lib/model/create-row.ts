// createRow: one object created by Parse Server's own write path, answered as
// the stored row's JSON — the write counterpart of queryRows. The body goes to
// Parse's RestWrite exactly as the SDK's save of a new object sends it, with
// the caller's auth, so class-level permissions, ACLs, beforeSave/afterSave,
// defaults, required fields, the database's constraints, LiveQuery and the
// ambient transaction all apply; only the SDK's client-side bookkeeping (a
// Parse.Object, its pending operations and state, decoding the answer back
// into it) is left out.
import Parse from 'parse/node'
import { createObject } from '../parse/direct-writes.js'
import { parseConfig, schemaMemo } from '../access/parse-config.js'
import { encodeForSave } from '../parse/internals.js'
import { modelByClass } from './registry.js'

/** Who creates the row: what a handler receives (master key, session user, or nobody), as `asCaller` reads it. */
export interface RowCaller { master: boolean, user?: Parse.User }

/** What every created row carries besides its fields. */
export interface CreatedRow { objectId: string, createdAt: string, updatedAt: string }

export interface CreateRowOptions {
  /** Given to the class's beforeSave and afterSave as `request.context` (a copy, as the SDK sends it). */
  context?: Record<string, unknown>
}

type ModelClass = abstract new (...args: never[]) => Parse.Object

/** Classes with rules of their own (sign-up, sessions, devices): their saves take the SDK. */
const OWN_RULES = new Set(['_User', '_Session', '_Installation'])

/**
 * Creates one `Model` (a @ParseClass model or a class name) with `fields` — plain
 * values, a Parse.ACL (or its JSON), saved Parse.Objects as pointers, Dates,
 * GeoPoints, saved Files — as `caller`, exactly as `new Model(fields).save(null,
 * asCaller(caller))` would. Answers the row Parse stored: the fields sent and what
 * the server set (objectId, createdAt, defaults, fields a beforeSave changed), in
 * Parse's REST JSON, with updatedAt = createdAt.
 */
export async function createRow<Row extends object = Record<string, unknown>> (
  Model: ModelClass | string, fields: Record<string, unknown>, caller: RowCaller, options: CreateRowOptions = {}
): Promise<Row & CreatedRow> {
  const className = classNameOf(Model)
  const body = encodeFields(fields)
  const server = { config: parseConfig(Parse.CoreManager.get('APPLICATION_ID')), schemaMemo: schemaMemo() }
  const response = await createObject(server, className, { ...body }, {
    ...saveAs(caller),
    ...(options.context ? { context: options.context } : {})
  })
  const row: Record<string, unknown> = { objectId: response.objectId, ...body }
  // The ACL as Parse stores it: granted permissions only.
  if (body.ACL) row.ACL = grantedOnly(body.ACL as AclJSON)
  for (const [name, value] of Object.entries(response)) {
    // A field the beforeSave removed comes back as Parse's Delete operation.
    if (isDelete(value)) delete row[name]
    else row[name] = value
  }
  row.updatedAt = row.createdAt
  // Not a field: lets {mount}/functions/{name} tag the answer so Parse.Cloud.run decodes a Parse.Object, as for a saved object.
  Object.defineProperty(row, ROW_CLASS, { value: className })
  return row as Row & CreatedRow
}

const ROW_CLASS = Symbol('fastify-parse-kit.row-class')

/** The class of a row createRow answered; undefined for any other value. */
export function createdRowClass (value: unknown): string | undefined {
  return value !== null && typeof value === 'object' ? (value as { [ROW_CLASS]?: string })[ROW_CLASS] : undefined
}

function classNameOf (Model: ModelClass | string): string {
  const className = typeof Model === 'string' ? Model : modelByClass(Model)?.className
  if (className === undefined) throw new TypeError(`createRow: ${(Model as ModelClass).name} has no @ParseClass (pass a model class or a class name)`)
  if (OWN_RULES.has(className)) throw new TypeError(`createRow: ${className} has rules of its own (sign-up, sessions, devices): create it with the Parse SDK`)
  return className
}

/** The SDK options `asCaller` gives for this caller: its session token resolves to the user the request already has. */
function saveAs (caller: RowCaller): { useMasterKey?: boolean, sessionToken?: string } {
  if (caller.master) return { useMasterKey: true }
  const sessionToken = caller.user?.getSessionToken()
  return sessionToken ? { sessionToken } : {}
}

type AclJSON = Record<string, { read?: boolean, write?: boolean }>

/** Each field as the SDK's save sends it; what the SDK could not send is refused with 142, naming the field. */
function encodeFields (fields: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue // as in a JSON body
    let encoded: unknown
    try {
      // A plain ACL is checked as Parse.ACL checks one.
      encoded = encodeForSave(name === 'ACL' && value !== null && !(value instanceof Parse.ACL) ? new Parse.ACL(value as AclJSON) : value)
    } catch (error) {
      throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `createRow: ${name}: ${(error as Error).message}`)
    }
    // A create takes values: an operation (Increment, AddUnique, …) has nothing to apply to.
    if (encoded !== null && typeof encoded === 'object' && '__op' in encoded) {
      throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `createRow: ${name} is an operation; a new row takes values`)
    }
    body[name] = encoded
  }
  return body
}

/** An ACL as Parse stores it: only granted permissions, no entry without one. */
function grantedOnly (acl: AclJSON): AclJSON {
  const granted: AclJSON = {}
  for (const [who, permissions] of Object.entries(acl)) {
    const kept: { read?: true, write?: true } = {}
    if (permissions.read === true) kept.read = true
    if (permissions.write === true) kept.write = true
    if (kept.read || kept.write) granted[who] = kept
  }
  return granted
}

function isDelete (value: unknown): boolean {
  return value !== null && typeof value === 'object' && (value as { __op?: unknown }).__op === 'Delete'
}
