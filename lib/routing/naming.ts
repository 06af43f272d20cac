// Route prefixes: the kebab-case plural of a class name (Category → categories,
// Person → people, OrderLine → order-lines).
import pluralize from 'pluralize'
import { RouteDeclarationError } from '../errors.js'

export function kebabPlural (className: string): string {
  const words = className.replace(/^_+/, '').split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|[_\s-]+/).filter(Boolean)
  if (words.length === 0) throw new RouteDeclarationError(`Cannot derive a route prefix from "${className}"`)
  words[words.length - 1] = pluralize(words[words.length - 1])
  return words.map((word) => word.toLowerCase()).join('-')
}

const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*(\/[a-z0-9]+(-[a-z0-9]+)*)*$/

export function checkPrefix (prefix: string, where: string): string {
  if (!KEBAB.test(prefix)) throw new RouteDeclarationError(`${where}: route prefix "${prefix}" must be kebab-case (lowercase words joined by -), e.g. 'order-lines'`)
  if (prefix === 'functions' || prefix.startsWith('functions/')) throw new RouteDeclarationError(`${where}: route prefix "${prefix}" is reserved for {mount}/functions/{name}`)
  const first = prefix.split('/')[0]
  if (PARSE_PATHS.has(first)) {
    throw new RouteDeclarationError(`${where}: route prefix "${prefix}" is Parse Server's own path {mount}/${first}/… (or the kit's health check): a method there replaces the route of the same name (users/me, sessions/me, classes/<Class>, jobs/<job>, health/live) without a word. Choose another, e.g. @Route('my-${first}')`)
  }
  return prefix
}

/**
 * The first path segments Parse Server (9.x) and the kit's health check answer
 * under the mount, that a kebab-case prefix can spell. Declared routes are
 * Fastify's and win over Parse's: @Route('users') with a method `me` answered
 * GET {mount}/users/me in Parse's place.
 */
const PARSE_PATHS = new Set([
  'aggregate', 'apps', 'batch', 'challenge', 'classes', 'config', 'events', 'files', 'graphql', 'health', 'hooks',
  'installations', 'jobs', 'login', 'logout', 'purge', 'push', 'roles', 'schemas', 'scriptlog', 'security', 'sessions', 'users'
])
