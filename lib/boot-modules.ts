// What kitPlugin's boot steps run (plugin.ts), loaded in one dynamic import once
// the options have passed: a boot refused for an option never loads Parse Server,
// the database drivers, the route and document machinery or the job runners.
// plugin.ts keeps the order in which these run; this file only gathers them.
export { openDatabase } from './storage/database.js'
export { startParseServer } from './host/parse-server.js'
export { masterKeyIpsOf, mountParse } from './host/mount.js'
export { authLimiter } from './host/auth-limits.js'
export { exposeParseHeaders, registerCors } from './host/cors.js'
export { composeCloud } from './host/cloud.js'
export { schemaConfigFrom } from './model/schema-boot.js'
export { prepareSchemaGeneration } from './storage/schema-generation.js'
export { lockSchemas } from './model/schema-lock.js'
export { boundClientFields } from './model/client-fields.js'
export { registerDeclaredRoutes } from './routing/register.js'
export { collectRoutes } from './docs/collector.js'
export { setupSwagger } from './docs/setup.js'
export { applyAllIndexes, applyFieldConstraints } from './storage/indexes/apply.js'
export { startJobs } from './jobs/start.js'
export { startQueue } from './jobs/queue.js'
export { refuseQueueOn } from './storage/queue.js'
export { registerTracing } from './host/tracing.js'
export { registerRequestIds } from './host/request-ids.js'
export { collectWhenIdle } from './host/idle-collection.js'
