// The request target as Express will route it, or a refusal. The gate decides on
// this path; anything that could be routed differently by Fastify, Express, Parse
// or a proxy in front is refused rather than reinterpreted.

import { mountPrefix } from '../mount-prefix.js'

export type MappedTarget = { path: string } | { refusal: string }

/** Letters, digits, `_` and `-` in non-empty segments: nothing to decode and nothing to refuse (the common case, checked first). */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_-]+)+\/?$|^\/$/

/** Encoded dot, slash and backslash: decoded by Express before it routes. */
const ENCODED_SEPARATORS = /%(2e|2f|5c)/i

/**
 * `rawUrl` is the request line's target; `mountPath` the kit's mount ('/' or '/parse').
 * Returns the decoded path under the mount (always starting with '/'), as
 * @fastify/express hands it to Parse (decodeURI of the path), or why it is refused.
 */
export function mapRequestTarget (rawUrl: string, mountPath: string): MappedTarget {
  if (!rawUrl.startsWith('/')) return { refusal: 'absolute-form and authority-form request targets are refused: send the path only (origin form)' }
  const queryAt = rawUrl.indexOf('?')
  const rawPath = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt)
  if (PLAIN_PATH.test(rawPath)) return underMount(rawPath, mountPath)
  if (rawPath.includes('\\')) return { refusal: 'backslashes are refused in the path' }
  if (rawPath.includes(';')) return { refusal: 'path parameters (;) are refused' }
  if (ENCODED_SEPARATORS.test(rawPath)) return { refusal: 'encoded dots, slashes and backslashes (%2e, %2f, %5c) are refused in the path' }
  if (rawPath.includes('//')) return { refusal: 'empty path segments (//) are refused' }
  let decoded: string
  try {
    decoded = decodeURI(rawPath)
  } catch {
    return { refusal: 'the path is not valid percent-encoding' }
  }
  // Control characters, and what decodeURI leaves encoded (#, ?, etc. never reach here decoded).
  if (/[\u0000-\u001f\u007f]/.test(decoded) || decoded.includes('\\') || decoded.includes('//')) return { refusal: 'the path contains characters that are refused' } // eslint-disable-line no-control-regex -- control characters are what it refuses
  if (decoded.includes('%')) return { refusal: 'double-encoded paths (%25) are refused' }
  if (/(^|\/)\.\.?(\/|$)/.test(decoded)) return { refusal: 'dot segments (. and ..) are refused in the path' }
  return underMount(decoded, mountPath)
}

function underMount (decoded: string, mountPath: string): MappedTarget {
  const refusal = outsideMount(decoded, mountPath)
  if (refusal !== undefined) return { refusal }
  const base = mountPrefix(mountPath)
  const under = decoded.slice(base.length) || '/'
  return { path: under }
}

function outsideMount (decoded: string, mountPath: string): string | undefined {
  const base = mountPrefix(mountPath)
  if (!decoded.startsWith(base) || (decoded.length > base.length && decoded[base.length] !== '/')) {
    return `the path is outside ${mountPath}`
  }
  return undefined
}

/** Why mapRequestTarget refuses the target, or undefined; a plain path (the common case) is judged without building the mapped target. */
export function targetRefusal (rawUrl: string, mountPath: string): string | undefined {
  if (rawUrl.startsWith('/')) {
    const queryAt = rawUrl.indexOf('?')
    const rawPath = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt)
    if (PLAIN_PATH.test(rawPath)) return outsideMount(rawPath, mountPath)
  }
  const target = mapRequestTarget(rawUrl, mountPath)
  return 'refusal' in target ? target.refusal : undefined
}

/** What may follow the mount in a target that names it: nothing, '/', '?', ';', '\\' or '%'. */
const MOUNT_FOLLOWERS = ['', '/', '?', ';', '\\', '%']

/** True when a raw target (origin or absolute form) names a path under the mount; used before routing. */
export function targetsMount (rawUrl: string, mountPath: string): boolean {
  if (mountPath === '/') return true
  // The mount spelled as configured (the common case): what follows it decides, as below, with no copy of the target.
  if (rawUrl.startsWith(mountPath)) return MOUNT_FOLLOWERS.includes(rawUrl[mountPath.length] ?? '')
  let path = rawUrl
  if (!rawUrl.startsWith('/')) {
    // Absolute form: the path starts after scheme://authority.
    const afterScheme = rawUrl.indexOf('//')
    const slash = afterScheme === -1 ? -1 : rawUrl.indexOf('/', afterScheme + 2)
    path = slash === -1 ? '/' : rawUrl.slice(slash)
  }
  // `//parse/…` names the mount too (a proxy or client may collapse the slashes): the gate answers it, not Fastify's 404.
  if (path.startsWith('//')) path = path.replace(/^\/+/, '/')
  const lower = path.toLowerCase()
  const base = mountPath.toLowerCase()
  return lower === base || lower.startsWith(`${base}/`) || lower.startsWith(`${base}?`) || lower.startsWith(`${base};`) ||
    lower.startsWith(`${base}\\`) || lower.startsWith(`${base}%`)
}
