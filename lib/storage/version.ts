// @ParseVersionField enforcement. A save carries the version the object was
// read at (BaseModel sends it even when unchanged); the kit's beforeSave step
// turns it into the next version, and the storage adapter writes only if the
// stored version is still the one that was read: otherwise CONFLICT.
import Parse from 'parse/node'
import { modelByName } from '../model/registry.js'

export function versionFieldOf (className: string): string | undefined {
  return modelByName(className)?.versionField
}

/** Runs first in the beforeSave of a versioned class. */
export function stampVersion (request: { object: Parse.Object, original?: Parse.Object, master?: boolean }, field: string): void {
  if (!request.original) {
    request.object.set(field, 1) // every new object starts at 1, whatever the client sent
    return
  }
  // A blind update (no version: a REST PUT without it, createWithoutData(id).save()) would overwrite
  // whatever another client saved meanwhile. Only the master key may overwrite without reading first.
  // A row saved before the class had a version field has none to read: it counts as version 0, so the
  // update is still checked (it writes only while the row has no version) and old rows stay updatable.
  // An operation is no version read: Increment by 0 would pass any stored version through (a blind write).
  const sent = (request.object.op(field) as { toJSON?: () => unknown } | undefined)?.toJSON?.()
  if (sent !== null && typeof sent === 'object' && '__op' in sent) {
    throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${request.object.className} uses optimistic locking: ${field} takes the number the object was read at, not an operation (${String(sent.__op)}).`)
  }
  const unversioned = request.original.get(field) === undefined || request.original.get(field) === null
  if (!request.master && !unversioned && !request.object.dirtyKeys().includes(field)) {
    throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${request.object.className} uses optimistic locking: an update must carry the ${field} it was read at (objects fetched through the SDK send it). Fetch the object first, or use the master key to overwrite.`)
  }
  const read = request.object.get(field)
  // A version no read gives ("1", 1.5, -1, {}) was a 409 the client could never get past by reloading.
  if (request.object.dirtyKeys().includes(field) && read !== undefined && read !== null && !isVersionNumber(read)) {
    throw new Parse.Error(Parse.Error.VALIDATION_ERROR, `${request.object.className} uses optimistic locking: ${field} takes the whole number the object was read at (got ${describe(read)}).`)
  }
  const base = isVersionNumber(read) ? read : 0
  request.object.set(field, base + 1)
}

function isVersionNumber (value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0
}

function describe (value: unknown): string {
  return value instanceof Date ? 'a Date' : (JSON.stringify(value) ?? typeof value).slice(0, 40)
}

/** The filter a versioned update adds: the stored version must be the one the save was based on. */
export function expectedVersion (nextVersion: number): unknown {
  const previous = nextVersion - 1
  return previous > 0 ? previous : { $exists: false }
}
