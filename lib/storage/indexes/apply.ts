// applyAllIndexes and applyFieldConstraints: the declared indexes and field
// constraints, made real in whichever database is running. Safe to run on
// every boot: what exists is reported, not an error.
import type { FastifyBaseLogger } from 'fastify'
import { allModels } from '../../model/registry.js'
import { currentDatabase } from '../database.js'
import { currentKitState, KitState } from '../../kit-state.js'
import { applyPostgresIndexes, printPostgresIndexes } from '../postgres/indexes.js'
import { applyPostgresConstraints, printPostgresConstraints } from '../postgres/check-constraints.js'
import { applyMongoIndexes, applyMongoSchemaValidators, printMongoIndexes, printMongoValidators } from '../mongo/indexes.js'
import { planIndexes, type IndexReport, type IndexSpec } from './plan.js'
import { SESSION_CLASS, sessionIndexes } from './sessions.js'
import { parseConfig } from '../../access/parse-config.js'
import Parse from 'parse/node'

export type { IndexReport } from './plan.js'

export interface ApplyOptions {
  log?: Pick<FastifyBaseLogger, 'info' | 'warn'>
}

/** The declared indexes and the ones Parse's own session lookups need. */
function kitIndexes (): IndexSpec[] {
  return [...planIndexes(), ...sessionIndexes()]
}

/** Unique, ordered, geospatial, expiry, compound (unique/sparse/partial), text and row-ACL indexes from the declarations, and the session indexes. */
export async function applyAllIndexes (server?: unknown, options: ApplyOptions = {}): Promise<IndexReport[]> {
  const database = requireDatabase(server, 'applyAllIndexes')
  const specs = kitIndexes()
  await sessionClassExists(options)
  const reports = await printWhenUnreachable(options, '[indexes]', async () => database.kind === 'postgres'
    ? applyPostgresIndexes(database.adapter, specs, allModels().map((model) => model.className))
    : applyMongoIndexes(database.adapter, specs, allModels()), () => database.kind === 'postgres'
    ? printPostgresIndexes(database.adapter, specs)
    : printMongoIndexes(database.adapter, specs, allModels()))
  summarise(reports, options, '[indexes]')
  return reports
}

/**
 * The database refuses writes that break a declared constraint (enum, min/max,
 * integer, maxLength/minLength, pattern), even writes that bypass the code:
 * a $jsonSchema validator on MongoDB, CHECK constraints on PostgreSQL.
 */
export async function applyFieldConstraints (server?: unknown, options: ApplyOptions = {}): Promise<IndexReport[]> {
  const database = requireDatabase(server, 'applyFieldConstraints')
  const models = allModels()
  const reports = await printWhenUnreachable(options, '[constraints]', async () => database.kind === 'postgres'
    ? applyPostgresConstraints(database.adapter, models)
    : applyMongoSchemaValidators(database.adapter, models), () => database.kind === 'postgres'
    ? printPostgresConstraints(database.adapter, models)
    : printMongoValidators(database.adapter, models))
  summarise(reports, options, '[constraints]')
  return reports
}

/** @deprecated Renamed `applyFieldConstraints`: it applies PostgreSQL's CHECK constraints as well as MongoDB's validators. */
export const applyMongoValidators = applyFieldConstraints

/**
 * Parse makes the _Session table with the first login; its indexes are made
 * before that, by Parse's own class creation (the database may be unreachable:
 * then the commands are printed below).
 */
async function sessionClassExists (options: ApplyOptions): Promise<void> {
  try {
    const schema = await parseConfig(Parse.CoreManager.get('APPLICATION_ID') as string).database.loadSchema()
    await schema.enforceClassExists(SESSION_CLASS)
  } catch (error) {
    options.log?.warn(`[indexes] the ${SESSION_CLASS} class could not be made ready (${(error as Error).message}); its indexes follow when it exists`)
  }
}

/** The database of the kit registered on `server` (a Fastify instance); without one, the kit running in this process. */
function requireDatabase (server: unknown, caller: string) {
  const database = currentDatabase(server === undefined ? currentKitState() : stateOf(server, caller))
  if (!database) throw new Error(`${caller}: no database is open; call it after kitPlugin has booted (e.g. in an onListen hook)`)
  return database
}

function stateOf (server: unknown, caller: string): KitState {
  const state = (server as { kit?: { state?: unknown } } | null)?.kit?.state
  if (!(state instanceof KitState)) throw new Error(`${caller}: pass the Fastify instance kitPlugin is registered on (it has no fastify.kit)`)
  return state
}

/** When the database cannot be reached at all, say so and print what would have been run. */
async function printWhenUnreachable (options: ApplyOptions, label: string, run: () => Promise<IndexReport[]>, plan: () => IndexReport[]): Promise<IndexReport[]> {
  try {
    return await run()
  } catch (error) {
    const printed = plan()
    if (printed.length > 0) options.log?.warn(`${label} the database could not be reached (${(error as Error).message}); nothing was applied. Run these by hand:\n${printed.map((r) => r.command).join('\n')}`)
    else options.log?.warn(`${label} the database could not be reached (${(error as Error).message}); nothing to apply`)
    return printed
  }
}

const CHANGED = new Set<IndexReport['status']>(['created', 'replaced', 'dropped'])

/** One line per change and per failure, then a count that names every failure. */
function summarise (reports: IndexReport[], options: ApplyOptions, label: string): void {
  for (const report of reports) {
    if (report.warn && report.detail) options.log?.warn(`${label} ${report.detail}`)
    else if (report.status === 'failed') options.log?.warn(`${label} ${report.className}.${report.name} failed: ${report.detail}${report.command ? `\n  by hand: ${report.command}` : ''}`)
    else if (CHANGED.has(report.status) && report.detail) options.log?.info(`${label} ${report.detail}`)
    else if (report.detail) options.log?.info(`${label} ${report.className}.${report.name} ${report.status}: ${report.detail}`)
  }
  const count = (status: IndexReport['status']) => reports.filter((r) => r.status === status).length
  const printed = count('printed')
  const failed = reports.filter((r) => r.status === 'failed').map((r) => `${r.className}.${r.name}`)
  const counts = [`${count('created')} created`, `${count('replaced')} replaced`, `${count('dropped')} dropped`, `${count('exists')} already present`, `${failed.length} failed${failed.length > 0 ? ` (${failed.join(', ')})` : ''}`]
  if (printed > 0) counts.push(`${printed} not applied (commands printed above)`)
  options.log?.[printed > 0 || failed.length > 0 ? 'warn' : 'info'](`${label} ${counts.join(', ')}`)
}
