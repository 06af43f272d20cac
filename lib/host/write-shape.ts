// Parse Server reads a save's field operations ({"__op": …}) assuming their
// shape: an unknown op (or SetOnInsert, which only its internals use) is thrown
// as a bare string, AddRelation with a null pointer, Batch without a list of
// ops and a body that is a number throw a TypeError, and PostgreSQL takes an
// Increment of "x" into its SQL: each was a 500 (inside a transactional /batch
// with the TypeError's text), as was a Date whose iso is no date. The mount
// refuses them first.
import { isJsonObject } from './json-object.js'
import { OBJECT_WRITE_PATH } from './acl-shape.js'
import { jobRouteProblem } from './job-route-shape.js'

const CALL_PATH = /^\/(?:functions|jobs)\/[^/]+\/?$/i

const LOGIN_PATH = /^\/login\/?$/i
const INSTALLATION_PATH = /^\/installations(?:\/[^/]+)?\/?$/i

const OPERATIONS = ['Increment', 'Add', 'AddUnique', 'Remove', 'AddRelation', 'RemoveRelation', 'Delete', 'Batch']

/** Why Parse cannot take this save's body or one of its operations, or undefined. `method` is the one Parse runs (after `_method`). */
export function writeProblem (method: string, path: string, body: unknown): string | undefined {
  const jobProblem = jobRouteProblem(method, path, body)
  if (jobProblem) return jobProblem
  // A function or job of the application's cloud code that answers with what it was sent: Parse's functions
  // router encodes that answer outside any catch, so a value the SDK cannot encode ended the process.
  if (method === 'POST' && CALL_PATH.test(path) && isJsonObject(body)) return firstTypedProblem(body, true)
  if (method === 'POST' && LOGIN_PATH.test(path) && isJsonObject(body)) return authDataProblem(body.authData)
  if ((method !== 'POST' && method !== 'PUT') || !OBJECT_WRITE_PATH.test(path)) return undefined
  if (typeof body === 'number' || typeof body === 'boolean') return `the body of a save must be a JSON object (got ${typeof body})`
  if (!isJsonObject(body)) return undefined // Parse answers the other shapes itself
  if (INSTALLATION_PATH.test(path)) {
    const problem = installationProblem(body)
    if (problem) return problem
  }
  for (const [field, value] of Object.entries(body)) {
    const problem = nestedKeyProblem(field) ?? operationProblem(field, value)
    if (problem) return problem
  }
  return firstTypedProblem(body, false)
}

/**
 * Parse refuses a key with "$" inside an Object it is sent ({"meta": {"$x": 1}}: 121), but stored one
 * written through a dotted key ("meta.$x"), after which every save sending that Object back was 121.
 */
function nestedKeyProblem (field: string): string | undefined {
  const dot = field.indexOf('.')
  if (dot < 0 || !field.includes('$', dot)) return undefined
  return `${field}: a key inside an Object must not contain "$" (Parse refuses such a key when the Object is sent whole)`
}

function firstTypedProblem (body: Record<string, unknown>, call: boolean): string | undefined {
  for (const [field, value] of Object.entries(body)) {
    const problem = typedProblem(field, value, 0, call)
    if (problem) return problem
  }
  return undefined
}

/**
 * A Date whose iso is no date: PostgreSQL refused it in the SQL (a 500), and on a class with a
 * beforeSave the SDK could not encode it (parse/operation-fit.ts). A Pointer without objectId, which no
 * SDK sends and the SDK cannot encode (an afterSave or LiveQuery on its class ended the process). In a
 * call's parameters (`call`) also a File without url; a save may name a File by its name alone (Parse
 * fills in the url). At any depth Parse stores.
 * In a save also what Parse stores but the SDK cannot read back: a GeoPoint that is no pair of numbers
 * in range (text was PostgreSQL's 500), a Polygon that is no list of three or more such pairs, an
 * Object without objectId, an operation below a field's own, a File without url below the top level:
 * stored, each made every read of the row through an afterFind, and its delete through a beforeDelete,
 * answer 500 (on _User, every request with the user's session: Parse builds the user through the SDK).
 */
function typedProblem (field: string, value: unknown, depth: number, call: boolean): string | undefined {
  if (value === null || typeof value !== 'object' || depth > 64) return undefined
  const type = Array.isArray(value) ? undefined : (value as { __type?: unknown }).__type
  if (type === 'Date') {
    const iso = (value as { iso?: unknown }).iso
    return typeof iso === 'string' && !Number.isNaN(Date.parse(iso)) ? undefined : `${field} holds a Date whose iso is not a date (got ${JSON.stringify(iso) ?? 'none'})`
  }
  if (type === 'Pointer' && typeof (value as { objectId?: unknown }).objectId !== 'string') return `${field} holds a Pointer without an objectId`
  if (call && type === 'File' && typeof (value as { url?: unknown }).url !== 'string') return `${field} holds a File without a url (upload the file first)`
  if (!call) {
    const problem = unreadableProblem(field, value as Record<string, unknown>, type, depth)
    if (problem) return problem
  }
  // A Batch's own operations are the field's, as it is.
  const batch = depth === 0 && (value as { __op?: unknown }).__op === 'Batch' ? (value as { ops?: unknown }).ops : undefined
  for (const inner of Array.isArray(batch) ? batch : Object.values(value)) {
    const problem = typedProblem(field, inner, Array.isArray(batch) ? 0 : depth + 1, call)
    if (problem) return problem
  }
  return undefined
}

/**
 * Parse reads an installation's installationId as text (toLowerCase: a TypeError, 500) and looks its
 * deviceToken up before its schema check (a number there was PostgreSQL's 500).
 */
function installationProblem (body: Record<string, unknown>): string | undefined {
  if ('installationId' in body && typeof body.installationId !== 'string') return `installationId must be a string (got ${JSON.stringify(body.installationId) ?? 'none'})`
  if (typeof body.deviceToken === 'number' || typeof body.deviceToken === 'boolean') return `deviceToken must be a string (got ${JSON.stringify(body.deviceToken)})`
  return undefined
}

/**
 * Parse refuses a sign-up or user save whose authData names an id that is not text (162), but a
 * login with a password took such authData and stored it on the user.
 */
function authDataProblem (authData: unknown): string | undefined {
  if (!isJsonObject(authData)) return undefined
  for (const [provider, data] of Object.entries(authData)) {
    const id = isJsonObject(data) ? data.id : undefined
    if (id !== undefined && id !== null && typeof id !== 'string') return `authData.${provider}.id must be a string (got ${JSON.stringify(id)})`
  }
  return undefined
}

/** What a save stores that the Parse SDK cannot decode (depth 0 is the field's value, where an operation belongs). */
function unreadableProblem (field: string, value: Record<string, unknown>, type: unknown, depth: number): string | undefined {
  if (type === 'GeoPoint' && !isPoint(value.latitude, value.longitude)) {
    return `${field} holds a GeoPoint that is not a latitude from -90 to 90 and a longitude from -180 to 180 (got ${JSON.stringify(value.latitude) ?? 'none'}, ${JSON.stringify(value.longitude) ?? 'none'})`
  }
  if (type === 'Polygon') {
    const coordinates = value.coordinates
    const fits = Array.isArray(coordinates) && coordinates.length >= 3 && coordinates.every((point) => Array.isArray(point) && point.length === 2 && isPoint(point[0], point[1]))
    if (!fits) return `${field} holds a Polygon whose coordinates are not a list of three or more [latitude, longitude] pairs`
  }
  if (type === 'Object' && value.className !== undefined && typeof value.objectId !== 'string') return `${field} holds an Object without an objectId`
  // Parse fills in the url of a top-level File named alone; below it the row keeps a File the SDK cannot encode.
  if (type === 'File' && typeof value.url !== 'string' && (depth > 0 || field.includes('.'))) return `${field} holds a File without a url inside an Object or Array (upload the file and send its url, or put the file in a field of its own)`
  if (depth > 0 && typeof value.__op === 'string') return `${field} holds an operation (__op) inside its value; an operation applies to a whole field (use "${field}.<key>" for a key of an Object)`
  return undefined
}

function isPoint (latitude: unknown, longitude: unknown): boolean {
  return typeof latitude === 'number' && typeof longitude === 'number' && latitude >= -90 && latitude <= 90 && longitude >= -180 && longitude <= 180
}

function operationProblem (field: string, value: unknown): string | undefined {
  if (!isJsonObject(value) || !('__op' in value)) return undefined
  const op = value.__op
  if (typeof op !== 'string' || !OPERATIONS.includes(op)) return `unknown __op ${JSON.stringify(op)} on ${field}; Parse takes ${OPERATIONS.join(', ')}`
  if (op === 'Increment' && typeof value.amount !== 'number') return `Increment on ${field} needs a number amount (got ${JSON.stringify(value.amount)})`
  // PostgreSQL took a value that is not a list into jsonb_array_elements (a 500); MongoDB's adapter answers 107.
  if ((op === 'Add' || op === 'AddUnique' || op === 'Remove') && !Array.isArray(value.objects)) return `${op} on ${field} needs objects: a list of values (got ${JSON.stringify(value.objects) ?? 'none'})`
  // Parse wrote a key's relation to a join table named after the dotted key: PostgreSQL has none (a 500), MongoDB made one no query reads.
  if ((op === 'AddRelation' || op === 'RemoveRelation') && field.includes('.')) return `${op} on ${field}: a Relation is a field of its own, not a key inside an Object`
  if ((op === 'AddRelation' || op === 'RemoveRelation') && !(Array.isArray(value.objects) && value.objects.length > 0 && value.objects.every(isJsonObject))) {
    return `${op} on ${field} needs objects: a list of pointers such as {"__type": "Pointer", "className": …, "objectId": …}`
  }
  if (op === 'Batch') {
    if (!Array.isArray(value.ops) || value.ops.length === 0 || !value.ops.every(isJsonObject)) return `Batch on ${field} needs ops: a list of operations`
    for (const inner of value.ops) {
      const problem = operationProblem(field, inner)
      if (problem) return problem
    }
  }
  return undefined
}
