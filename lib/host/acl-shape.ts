// Parse Server reads each entry of a written object's ACL as {read, write}: an
// entry that is null (`"ACL": {"*": null}`) throws a TypeError inside it, a 500
// (inside a transactional /batch, with the TypeError's text). The mount refuses
// ACL entries that are not objects first.

/** Parse's routes that write an object: /classes/{name}[/{id}] and the special classes' own. */
export const OBJECT_WRITE_PATH = /^\/(?:classes\/[^/]+|users|roles|installations|sessions)(?:\/[^/]+)?\/?$/i

/** Why Parse cannot take the ACL this write carries, or undefined. `method` is the one Parse runs (after `_method`). */
export function aclProblem (method: string, path: string, body: unknown): string | undefined {
  if ((method !== 'POST' && method !== 'PUT') || !OBJECT_WRITE_PATH.test(path)) return undefined
  if (typeof body !== 'object' || body === null) return undefined
  const acl = (body as Record<string, unknown>).ACL
  if (typeof acl !== 'object' || acl === null || Array.isArray(acl)) return undefined
  for (const [who, entry] of Object.entries(acl)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      return `the ACL entry for ${JSON.stringify(who)} must be an object such as {"read": true} (got ${entry === null ? 'null' : Array.isArray(entry) ? 'an array' : typeof entry})`
    }
  }
  return undefined
}
