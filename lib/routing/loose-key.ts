// The key under which the kit's one-route-for-many-paths routes (refusals.ts,
// function-aliases.ts) look a request's path up before the router's exact check.

/**
 * Lower case, no query string, fragment or path parameters, percent-decoded, no
 * empty or trailing segments: at least every spelling the router could map to the path.
 */
export function looseKey (url: string): string {
  let end = url.length
  const query = url.indexOf('?')
  if (query !== -1) end = query
  const fragment = url.indexOf('#')
  if (fragment !== -1 && fragment < end) end = fragment
  const semicolon = url.indexOf(';')
  if (semicolon !== -1 && semicolon < end) end = semicolon
  let path = url.slice(0, end)
  if (path.includes('%')) {
    try {
      path = decodeURIComponent(path)
    } catch {}
  }
  if (path.includes('//')) path = path.replace(/\/{2,}/g, '/')
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1)
  return path.toLowerCase()
}
