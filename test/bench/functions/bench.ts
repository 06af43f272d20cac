// Bench-only declared endpoints, loaded beside the fixture's functions:
// {mount}/bench/benchConstant and the two role-checked variants.
import Parse from 'parse/node'
import { CloudFunction, clampLimit, queryRows, Route, type CloudRequest } from '../../../lib/index.js'
import { Note } from '../../../fixtures/models/Note.js'
import { BENCH_CONSTANT, BENCH_ROLE } from '../shared.js'

@Route('bench')
export class BenchFunctions {
  /** The same constant the bare Fastify route answers. */
  @CloudFunction({ methods: ['POST'] })
  static benchConstant () {
    return BENCH_CONSTANT
  }

  /** Session + role check, roles cached for a minute (the role cache on). */
  @CloudFunction({ methods: ['POST'], requireRoles: [BENCH_ROLE], roleCacheMs: 60_000 })
  static benchRolesCached () {
    return BENCH_CONSTANT
  }

  /** The fixture's listNotes without `returns`: the answer goes through JSON.stringify instead of a compiled serialiser. */
  @CloudFunction({ methods: ['GET'], validation: { fields: { limit: { type: Number } } } })
  static async benchListNotesUntyped (request: CloudRequest<{ limit?: number }>) {
    const limit = clampLimit(request.params.limit)
    return queryRows(new Parse.Query(Note).descending('createdAt').limit(limit), request, { count: true })
  }

  /** Session + role check, roles read through Parse's role graph on every call (the role cache off). */
  @CloudFunction({ methods: ['POST'], requireRoles: [BENCH_ROLE], roleCacheMs: 0 })
  static benchRolesUncached () {
    return BENCH_CONSTANT
  }
}
