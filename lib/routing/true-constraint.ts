// A router constraint that is derived `true` for the requests one kit route
// serves on behalf of many paths (refusals.ts, function-aliases.ts) and not at
// all for the others, which then go where they would have gone without it.
// Added before the routes it serves: adding a strategy rebuilds the instance's router.
import type { FastifyInstance } from 'fastify'
import type { IncomingMessage } from 'node:http'

export function addTrueConstraint (scope: FastifyInstance, name: string, takes: (request: IncomingMessage) => boolean): void {
  if (scope.hasConstraintStrategy(name)) return
  scope.addConstraintStrategy({
    name,
    storage () {
      const stores = new Map<unknown, unknown>()
      return { get: (value: unknown) => stores.get(value) ?? null, set: (value: unknown, store: unknown) => { stores.set(value, store) } } as never
    },
    deriveConstraint: (request: IncomingMessage) => takes(request) ? true : undefined,
    mustMatchWhenDerived: false,
    validate (value: unknown) {
      if (value !== true) throw new Error(`${name} takes only true`)
    }
  })
}
