// The public API of fastify-parse-kit, by area.

// The plugin, its settings and errors
export { kitPlugin, type KitOptions, type KitRuntime } from '../plugin.js'
export { configureKit, getKitConfig, type KitConfig } from './config.js'
export { CONFLICT, CONFLICT_MESSAGE, kitErrorCodes, EnvInvalidError } from './errors.js'
export { DATABASE_BUSY, DATABASE_BUSY_MESSAGE, DATABASE_UNAVAILABLE, DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from './storage/unavailable.js'
export { AUTH_ROUTES, type AllowedRoute } from './access/restriction.js'
export { kitServerOptions, KIT_SERVER_DEFAULTS, type KitServerOptionsInput } from './host/server-options.js'

// Observability
export { redactingSpanExporter } from './host/span-redaction.js'
export { requestIdFrom } from './host/request-ids.js'

// Models
export { ParseClass, ParseField, ParseVersionField } from './model/decorators.js'
export { BaseModel } from './model/base-model.js'
export { validateOrThrow } from './model/validate.js'
export { createSchemaConfig, type SchemaConfigOptions } from './model/schema-config.js'
export { catchError, clampLimit, MAX_QUERY_LIMIT } from './model/helpers.js'
export { ModelDeclarationError, type FieldOptions, type FieldType } from './model/field-options.js'
export type { ClassOptions, CompoundIndex, ClpOperation } from './model/registry.js'

// Access
export { implementACL, roleKey, type AclDescription } from './access/acl.js'
export { getUserRoles, ensureRole, addUsersToRole, removeUsersFromRole, addRoleToRole } from './access/roles.js'
export { configureRoleCache, invalidateRoles, type RoleCacheOptions } from './access/role-cache.js'

// Triggers
export {
  BeforeSave, AfterSave, BeforeDelete, AfterDelete, BeforeFind, AfterFind, BeforeSubscribe, AfterLiveQueryEvent,
  BeforeLogin, AfterLogin, AfterLogout, BeforePasswordResetRequest, BeforeConnect,
  BeforeSaveFile, AfterSaveFile, BeforeDeleteFile, AfterDeleteFile, BeforeConfigSave, AfterConfigSave
} from './triggers/decorators.js'

// Endpoints
export { Route, CloudFunction, ProtectedCloudFunction } from './routing/decorators.js'
export type { CloudFunctionOptions, ValidationField, HttpMethod } from './routing/options.js'
export { asCaller, requireUser, type CloudRequest } from './routing/request.js'
export { fieldsOf, type FieldsOfOptions, type FieldFor } from './routing/fields-of.js'
// TypeBox, for `returns` schemas, without a dependency of the project's own.
export { Type } from './typebox.js'
export type { Static } from '@sinclair/typebox'
export type { AuthenticatedRequest, RequestOf, ParamsOf, ReturnOf, FieldsParams } from './routing/typing.js'

// Server entry points
export { listenOrExit, masterKeyHint, bootOrExit, bootFailureText } from './host/startup.js'
export { assertPortFree } from './host/port-check.js'

// Parse Dashboard (optional package)
export { mountDashboard, dashboardDecision, type DashboardOptions, type DashboardDecision } from './host/dashboard.js'

// API documentation
export { setupSwagger } from './docs/setup.js'
export type { SwaggerConfig } from './docs/options.js'

// Transactions
export { withTransaction, Transactional, inTransaction, afterCommit, type TransactionOptions } from './storage/transaction.js'

// Reading and writing rows
export { queryRows, type QueryRowsResult, type QueryCaller, type QueryRowsOptions, type CountMode, type CountKind } from './storage/query-rows.js'
export { pageRows, pagingFields, pageOf, type PageOptions, type Page } from './storage/page-rows.js'
export { createRow, type CreatedRow, type CreateRowOptions, type RowCaller } from './model/create-row.js'

// Indexes and database constraints (applied at boot; exported for scripts)
export { applyAllIndexes, applyFieldConstraints, applyMongoValidators, type IndexReport } from './storage/indexes/apply.js'

// Seeding
export { SeedReport } from './seed/report.js'
export { seedRoles, nestRole, seedUser, seedMembership, seedRow, seedOnBoot, type SeedUser } from './seed/helpers.js'
export { assertMasterKeyAccepted, remoteSeedError } from './seed/remote.js'

// Jobs and schedules
export { Job, Cron } from './jobs/decorators.js'
export type { JobOptions, CronOptions } from './jobs/options.js'
export type { JobRequest, JobLogger } from './jobs/request.js'
export type { JobsOptions, QueueOptions } from './jobs/settings.js'
export { enqueue, listDeadJobs, queueRunning, rerunDeadJob } from './jobs/queue.js'
export type { DeadJobEntry, DeadJobsOptions, EnqueueOptions, Enqueued } from './jobs/queue.js'
