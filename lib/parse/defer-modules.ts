// Imported for its side effect, before the first import of anything that
// loads a deferred module at import time (Parse Server, pg-boss): puts every
// stand-in of lazy-subsystems.ts in place, and makes Parse's files compile
// without their inline source maps (no-parse-inline-maps.ts). ES modules run
// their imports in order, so importing this first is what makes both come first.
// @fastify/swagger and @fastify/swagger-ui require YAML only when they are
// registered, long after plugin.ts has imported parse-main.ts.
import { deferParseSubsystems } from './lazy-subsystems.js'
import { dropParseInlineMaps } from './no-parse-inline-maps.js'

dropParseInlineMaps()
deferParseSubsystems()
