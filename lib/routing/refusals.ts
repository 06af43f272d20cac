// A verb a declared path does not take is answered 405 (with Allow) by one route
// for every path, not one route per path: with thousands of declared functions
// those routes were most of the boot's routing work. The one route is a wildcard
// under the mount in the declared routes' scope (same body parsers, hooks and
// error handler as before), behind a router constraint that is derived true only
// for a declared path asked with a verb it refuses, spelled so that Fastify's
// router maps it to that path's own routes. Every other request goes where it
// went before: to the path's own routes, or to Parse's mount.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, RouteShorthandOptions } from 'fastify'
import type { IncomingMessage } from 'node:http'
import Parse from 'parse/node'
import type { HttpMethod } from './options.js'
import type { DeclaredFunction } from './registry.js'
import { looseKey } from './loose-key.js'
import { addTrueConstraint } from './true-constraint.js'

const CONSTRAINT = 'fastifyParseKitRefusedVerb'

export interface Refusal {
  /** The declared path, as its routes are registered. */
  url: string
  /** A verb the path's own routes take: the router must map the request's spelling to that route. */
  served: HttpMethod
  /** Verbs answered 405. */
  refused: HttpMethod[]
  /** Verbs the 405 names (Allow adds HEAD when GET is there). */
  allowed: HttpMethod[]
  /** The path's loose key when already made (a twin's, by function-aliases.ts); unset: made here. */
  key: string | undefined
  /** The function whose /functions twin this path is, when the twins' shared route serves it; unset: the path's own routes. */
  twin: DeclaredFunction | undefined
}

/** Whether the router maps a spelling of a twin's path to that twin (function-aliases.ts). */
export interface TwinReach {
  reaches (fn: DeclaredFunction, url: string): boolean
}

/** The hooks a refusal runs before its 405: the declared routes' app id check. */
export type RefusalGuards = Pick<RouteShorthandOptions, 'onRequest' | 'preValidation'>

/**
 * The refusals of every declared path, answered by one constrained wildcard route.
 * Made before the declared routes are registered: adding a constraint strategy
 * rebuilds the instance's whole router, which with a thousand functions' routes
 * already in it cost a fifth of the boot's routing work. The strategy stays unused
 * (and derives nothing) until `answer` registers the one route that needs it.
 */
export class Refusals {
  private readonly byKey = new Map<string, Refusal>()
  private twins: TwinReach | undefined

  constructor (private readonly scope: FastifyInstance) {
    addTrueConstraint(scope, CONSTRAINT, (request) => this.refusalOf(request) !== undefined)
  }

  /**
   * Registers the refusals of every declared path. Paths whose loose spellings
   * collide (they differ only in case, say) keep a refusal route of their own,
   * as every path had before.
   */
  answer (base: string, refusals: Refusal[], guards: RefusalGuards, twins?: TwinReach): void {
    const { scope, byKey } = this
    this.twins = twins
    // Each path's key once: a thousand functions give two thousand refused paths.
    const keys = refusals.map((refusal) => refusal.key ?? looseKey(refusal.url))
    const clashing = new Set<string>()
    refusals.forEach((refusal, i) => {
      if (byKey.has(keys[i])) clashing.add(keys[i])
      else byKey.set(keys[i], refusal)
    })
    const ownRoute = clashing.size === 0 ? [] : refusals.filter((_refusal, i) => clashing.has(keys[i]))
    for (const key of clashing) byKey.delete(key)
    for (const { url, refused, allowed } of ownRoute) {
      if (refused.length > 0) scope.route({ method: refused, url, ...guards, handler: methodNotAllowed(allowed) })
    }
    if (byKey.size === 0) return

    const verbs = [...new Set([...byKey.values()].flatMap((refusal) => refusal.refused))]
    // One answer per list of allowed verbs (a few kinds), not one per path.
    const byAllowed = new Map<string, RouteHandlerMethod>()
    const answers = new Map<Refusal, RouteHandlerMethod>()
    for (const refusal of byKey.values()) {
      const allowed = refusal.allowed.join(',')
      let answer = byAllowed.get(allowed)
      if (answer === undefined) byAllowed.set(allowed, answer = methodNotAllowed(refusal.allowed))
      answers.set(refusal, answer)
    }
    const refusalOf = (request: IncomingMessage) => this.refusalOf(request)
    scope.route({
      method: verbs,
      url: `${base}/*`,
      constraints: { [CONSTRAINT]: true },
      // HEAD is refused explicitly where it is refused.
      exposeHeadRoute: false,
      ...guards,
      handler (request, reply) {
        const refusal = refusalOf(request.raw)!
        return answers.get(refusal)!.call(this, request, reply)
      }
    })
  }

  private refusalOf (request: IncomingMessage): Refusal | undefined {
    const url = request.url ?? ''
    // Every request on the instance passes here: origin-form targets only (the mount refuses the others).
    if (url.charCodeAt(0) !== 47) return undefined
    const refusal = this.byKey.get(looseKey(url))
    if (refusal === undefined || !refusal.refused.includes(request.method as HttpMethod)) return undefined
    // The loose key matches more spellings than the router does: this one must reach the path's own route.
    const reaches = refusal.twin !== undefined && this.twins !== undefined ? this.twins.reaches(refusal.twin, url) : this.reachesOwnRoute(refusal.served, url)
    return reaches ? refusal : undefined
  }

  private reachesOwnRoute (served: HttpMethod, url: string): boolean {
    const route = this.scope.findRoute({ method: served, url })
    return route !== null && !('*' in route.params)
  }
}

export function methodNotAllowed (allowed: HttpMethod[]): RouteHandlerMethod {
  const allow = allowed.includes('GET') && !allowed.includes('HEAD') ? [...allowed, 'HEAD'] : allowed
  return async (request: FastifyRequest, reply: FastifyReply) => reply.code(405).header('allow', allow.join(', ')).send({
    code: Parse.Error.OPERATION_FORBIDDEN,
    error: `Method ${request.method} is not allowed here; use ${allowed.join(' or ')}`
  })
}
