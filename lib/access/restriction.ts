// Route restriction: Parse's generic REST surface is closed by default. What
// stays open is Parse's health check, Cloud Functions, the allow-list the app
// configures, the auth routes when allowAuthRoutes is on, and the master key.

import { mapRequestTarget } from './request-target.js'

export interface AllowedRoute {
  /** Path under the mount, e.g. '/files/*' ('*' at the end matches the rest). */
  path: string
  /** Verbs to open; all when omitted. */
  methods?: string[]
}

export interface RestrictionPolicy {
  allowAuthRoutes: boolean
  allowedRoutes: AllowedRoute[]
}

const ALWAYS_OPEN: AllowedRoute[] = [
  { path: '/health' },
  { path: '/functions/*', methods: ['GET', 'POST'] }
]

/** Exactly the spec's table: these open, method by method, when allowAuthRoutes is true. */
export const AUTH_ROUTES: AllowedRoute[] = [
  { path: '/login', methods: ['GET', 'POST'] },
  { path: '/logout', methods: ['POST'] },
  { path: '/users', methods: ['POST'] },
  { path: '/users/me', methods: ['GET'] },
  { path: '/sessions/me', methods: ['GET'] },
  { path: '/requestPasswordReset', methods: ['POST'] },
  { path: '/verificationEmailRequest', methods: ['POST'] }
]

export const BLOCKED_MESSAGE = 'This route is closed by route restriction. Expose what clients need as a Cloud Function (@CloudFunction), ' +
  'or set allowAuthRoutes: true to open the login, sign-up and session routes (other routes: the allowedRoutes option, or the master key).'

/** The 403 text: advice to set allowAuthRoutes only where it is not set already. */
export function blockedMessage (policy: Pick<RestrictionPolicy, 'allowAuthRoutes'>): string {
  if (!policy.allowAuthRoutes) return BLOCKED_MESSAGE
  return 'This route is closed by route restriction. Expose what clients need as a Cloud Function (@CloudFunction). ' +
    'allowAuthRoutes is on, so the login, sign-up and session routes are open already; other routes: the allowedRoutes option, or the master key.'
}

export function isRouteAllowed (method: string, path: string, policy: RestrictionPolicy): boolean {
  const normalised = normalisePath(path)
  if (normalised === undefined) return false
  const verb = method === 'HEAD' ? 'GET' : method
  const rules = policy.allowAuthRoutes
    ? [...ALWAYS_OPEN, ...AUTH_ROUTES, ...policy.allowedRoutes]
    : [...ALWAYS_OPEN, ...policy.allowedRoutes]
  return rules.some((rule) => matches(rule, verb, normalised))
}

/**
 * The path under the mount as Express will route it (trailing slash dropped);
 * undefined for targets the kit refuses to reason about (see request-target.ts).
 */
export function normalisePath (path: string): string | undefined {
  const target = mapRequestTarget(path, '/')
  if ('refusal' in target) return undefined
  return target.path.length > 1 ? target.path.replace(/\/$/, '') : target.path
}

/**
 * Wildcards over these bases open the application's classes only: Parse's own (_User,
 * _Session, _Installation, _Role, …) would sign up, edit users and mint sessions past a
 * closed allowAuthRoutes. A rule that names such a class (/classes/_User/*) opens it.
 */
const CLASS_BASES = new Set(['/classes', '/aggregate'])

/** Express routes case-insensitively, so the rules match that way too. */
function matches (rule: AllowedRoute, verb: string, path: string): boolean {
  if (rule.methods && !rule.methods.includes(verb)) return false
  const lower = path.toLowerCase()
  const rulePath = rule.path.toLowerCase()
  if (rulePath.endsWith('/*')) {
    const base = rulePath.slice(0, -2)
    if (!lower.startsWith(`${base}/`) || lower.length <= base.length + 1) return false
    return !(CLASS_BASES.has(base) && lower[base.length + 1] === '_')
  }
  return lower === rulePath
}
