// Bench-only declared endpoints, loaded beside the fixture's functions:
// {mount}/bench/benchConstant and the two role-checked variants.
import { CloudFunction, Route } from '../../../lib/index.js'
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

  /** Session + role check, roles read through Parse's role graph on every call (the role cache off). */
  @CloudFunction({ methods: ['POST'], requireRoles: [BENCH_ROLE], roleCacheMs: 0 })
  static benchRolesUncached () {
    return BENCH_CONSTANT
  }
}
