// Which paths are routes of Parse Server, read from Parse's own Express app at
// boot (its promise router, files and pages routers): a Parse upgrade that adds a
// route is known without editing a list here.
import { expressRouterStack } from '../parse/express-app.js'

export interface ParseRoute {
  method: string
  /** Express path syntax, e.g. '/classes/:className', '/files/:appId/*filepath'. */
  path: string
}

interface ExpressLayer {
  route?: { path: unknown, methods: Record<string, boolean> }
  handle?: { stack?: ExpressLayer[] }
}

/** Every route Parse's app serves (Parse mounts each of its routers at its root). */
export function parseRoutes (parseApp: unknown): ParseRoute[] {
  const stack = expressRouterStack(parseApp) as ExpressLayer[] | undefined
  if (!stack) throw new Error('Parse Server\'s Express app has no router stack to read its routes from (unexpected parse-server/express version).')
  const routes: ParseRoute[] = [{ method: 'GET', path: '/health' }]
  const walk = (layers: ExpressLayer[]) => {
    for (const layer of layers) {
      if (layer.route && typeof layer.route.path === 'string') {
        for (const method of Object.keys(layer.route.methods)) routes.push({ method: method.toUpperCase(), path: layer.route.path })
      } else if (Array.isArray(layer.handle?.stack)) {
        walk(layer.handle.stack)
      }
    }
  }
  walk(stack)
  return routes
}

/** Matches a path against Express route paths as Express does: case-insensitive, optional trailing slash. */
export function compileRoutes (routes: ParseRoute[]): (path: string) => boolean {
  const patterns = [...new Set(routes.map((route) => route.path))].map(toRegExp)
  return (path) => patterns.some((pattern) => pattern.test(path))
}

function toRegExp (path: string): RegExp {
  const source = path.split('/').map((segment) => {
    if (segment.startsWith(':')) return '[^/]+'
    if (segment.startsWith('*')) return '.+'
    return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  }).join('/')
  return new RegExp(`^${source}/?$`, 'i')
}
