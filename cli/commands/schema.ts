// `fpk schema plan`: prints what the next boot would change in the database
// (fields, class-level permissions, indexes, constraints), marking destructive
// changes, and answers with an exit code a deploy pipeline can stop on: 0 no
// change, 1 changes, 2 destructive, 3 the plan could not run (a pipeline that
// stops on anything but 0 and 1 never deploys on a plan that did not run). The
// comparison lives in the library (lib/storage/schema-plan.ts); this file finds
// the project, its models and its database.
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { CliError, type Io } from '../context.js'
import { detectLayout, findProjectRoot } from '../project.js'

export interface SchemaPlanOptions {
  /** The models directory (default: the project's models/ or cloud/models/). */
  models?: string
  /** The embedded PostgreSQL's data directory, when DATABASE_URI is unset (default: DATA_DIR, else .data/postgres). */
  dataDir?: string
  /** As the application's options say: kitPlugin's adminRole, and schema's strict, deleteExtraFields, recreateModifiedFields, version. */
  adminRole?: string
  strict?: boolean
  deleteExtraFields?: boolean
  recreateModifiedFields?: boolean
  schemaVersion?: string
  /** Print the statements PostgreSQL will run under each change. */
  sql?: boolean
}

/** The plan could not run (no models, no database, a model that does not load): neither "no change" nor "changes". */
export const PLAN_COULD_NOT_RUN = 3

/** Resolves to the exit code: 0 nothing changes, 1 changes, 2 destructive changes; throws a CliError with exit code 3 when the plan cannot run. */
export async function schemaPlan (io: Io, options: SchemaPlanOptions = {}): Promise<number> {
  try {
    return await plan(io, options)
  } catch (error) {
    if (error instanceof CliError) throw new CliError(error.message, PLAN_COULD_NOT_RUN)
    throw new CliError(`could not plan: ${(error as Error)?.message ?? String(error)}`, PLAN_COULD_NOT_RUN)
  }
}

async function plan (io: Io, options: SchemaPlanOptions): Promise<number> {
  const root = findProjectRoot(io.cwd) ?? io.cwd
  const modelsDir = options.models !== undefined ? path.resolve(io.cwd, options.models) : detectLayout(root).modelsDir
  if (!existsSync(modelsDir)) throw new CliError(`no models directory at ${modelsDir}: run fpk schema plan in the project, or pass --models <dir>`)
  await readTypeScript(root)
  // The library (Parse Server among it) is loaded only by this command.
  const { loadDeclarations } = await import('../../lib/loader.js')
  const { openDatabase } = await import('../../lib/storage/database.js')
  const { planSchema } = await import('../../lib/storage/schema-plan.js')
  const { formatPlan, planExitCode } = await import('../../lib/model/schema-diff.js')
  await loadDeclarations(modelsDir)
  const version = options.schemaVersion === undefined ? undefined : Number(options.schemaVersion)
  if (version !== undefined && !(Number.isInteger(version) && version >= 1)) throw new CliError(`--schema-version must be a whole number of 1 or more (got ${options.schemaVersion})`)
  const databaseURI = io.env?.DATABASE_URI || undefined
  // Generated projects give the embedded database's directory as DATA_DIR, relative to where the application runs.
  const dataDir = path.resolve(io.cwd, options.dataDir ?? (io.env?.DATA_DIR || path.join(root, '.data', 'postgres')))
  if (!databaseURI && !existsSync(dataDir)) throw new CliError(`no DATABASE_URI and no embedded database at ${dataDir}: set DATABASE_URI (or DATA_DIR), or pass --data-dir <dir> (the application's dataDir)`)
  const database = await openDatabase({ databaseURI, dataDir, onNotice: (line) => io.err(`${line}\n`) }).catch((error: unknown) => {
    // A running application holding the embedded database, a URI that does not answer: said in one line.
    throw new CliError(`cannot open the database: ${(error as Error)?.message ?? String(error)}`)
  })
  let result
  try {
    result = await planSchema(database, {
      adminRole: options.adminRole,
      strict: options.strict,
      deleteExtraFields: options.deleteExtraFields,
      recreateModifiedFields: options.recreateModifiedFields,
      version
    })
  } finally {
    await database.close()
  }
  if (result.behind) {
    io.out(`${result.behind}\nNo changes: these declarations are older than the database's, and their boot changes nothing.\n`)
    return 0
  }
  if (options.sql && database.kind !== 'postgres') io.err('--sql: the database is MongoDB; there are no statements to show\n')
  io.out(formatPlan(result.changes, { sql: options.sql === true && database.kind === 'postgres' }))
  return planExitCode(result.changes)
}

/**
 * Model files are TypeScript with legacy decorators: without a loader already
 * running (tsx through --import, as in the project's own scripts), the
 * project's tsx is registered with the project's tsconfig.
 */
async function readTypeScript (root: string): Promise<void> {
  const options = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`
  if (/\btsx\b/.test(options)) return
  const tsconfig = path.join(root, 'tsconfig.json')
  let api: string
  try {
    // The ESM entry of the project's tsx (require.resolve would give its CommonJS one).
    const manifest = createRequire(path.join(root, 'package.json')).resolve('tsx/package.json')
    const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }
    api = path.join(path.dirname(manifest), exports['./esm/api'].import.default)
  } catch {
    return // plain JavaScript models need no loader
  }
  const { register } = await import(pathToFileURL(api).href) as { register (options: { tsconfig?: string | false }): unknown }
  register({ tsconfig: existsSync(tsconfig) ? tsconfig : false })
}
