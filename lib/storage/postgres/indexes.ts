// Indexes on PostgreSQL. Parse stores a class as a table whose columns are
// named like the fields (pointers hold the target's objectId, GeoPoints are
// `point`, Numbers `double precision`).
import type { IndexReport, IndexSpec } from '../indexes/plan.js'
import type { PgQueries } from '../../parse/internals.js'
import { pgDatabase, pgFormatter } from '../../parse/adapter-internals.js'
import { runSchemaWork, type WhenFree } from './schema-work.js'
import { BUILDING_ELSEWHERE, buildConcurrently, buildingName, dropConcurrently, dropConcurrentlyCommand, isBuildingName, isDuplicateName, quoted } from './concurrent-index.js'
import { createIndexSql, declaredIndexName, indexRule, plainFallbackName, postgresIndexCommand } from './index-sql.js'
import { markOf, readMark } from './kit-mark.js'
import { cutShortRenames, renameCutShort, renamed, renameNote } from './cut-short-names.js'
import { describeChange, reconcileObjects, type FoundObject, type ObjectChange, type WantedObject } from '../indexes/reconcile.js'

type PgAdapter = object
type PgClient = PgQueries

type Format = (query: string, values?: unknown) => string

/** Index builds may take long on a large table: they run without the request query bound, CONCURRENTLY (writes go on). */
export async function applyPostgresIndexes (adapter: PgAdapter, specs: IndexSpec[], classes: string[]): Promise<IndexReport[]> {
  return runSchemaWork(adapter, (unbounded, whenFree) => buildIndexes(unbounded, specs, classes, whenFree))
}

/** What the next boot would do to the indexes, without doing it. */
export async function planPostgresIndexes (adapter: PgAdapter, specs: IndexSpec[], classes: string[]): Promise<{ changes: ObjectChange[], failures: IndexReport[] }> {
  const { wanted, failures } = wantedIndexes(adapter, specs)
  const client = pgDatabase(adapter)!
  const found = await foundIndexes(client)
  const { live, stale } = sortFound(renamed(found, cutShortRenames(found, wanted)), wanted)
  const invalid = new Set(stale.map(keyOf))
  const changes: ObjectChange[] = []
  for (const change of plannedChanges(wanted, live, classes)) {
    const target = wanted.find((w) => keyOf(w.object) === keyOf(change))
    if (change.action === 'create' && invalid.has(keyOf(change))) {
      changes.push({ ...change, action: 'replace', from: 'invalid (left by an interrupted build)' })
      continue
    }
    // A unique index on the column under another name does the job, and so does the plain index made over duplicates: the boot makes none.
    const twin = change.action === 'create' && change.kind === 'unique' && target
      ? await uniqueIndexOn(client, change.className, target.spec.fields[0].name)
      : undefined
    const fallback = change.action === 'create' && target?.spec.plainIfDuplicates && live.some((index) => index.className === change.className && index.name === plainFallbackName(target.spec))
    changes.push(twin || fallback ? { ...change, action: 'keep' } : change)
  }
  return { changes, failures }
}

interface WantedIndex {
  object: WantedObject
  /** Its name before the kit shortened it (what an older kit gave PostgreSQL to cut). */
  declared: string
  spec: IndexSpec
  /** The statement that builds it under a given name, CONCURRENTLY (run by the boot). */
  build: (name: string) => string
  /** The same, as printed for people who apply it by hand. */
  command: string
}

/** Each spec's SQL; a spec that has none (an untranslatable partial filter) fails alone. */
function wantedIndexes (adapter: PgAdapter, specs: IndexSpec[]): { wanted: WantedIndex[], failures: IndexReport[] } {
  const format: Format = pgFormatter(adapter)
  const wanted: WantedIndex[] = []
  const failures: IndexReport[] = []
  for (const spec of specs) {
    try {
      const { name, command, definition } = postgresIndexCommand(spec, format)
      const build = (as: string) => createIndexSql(spec, format, { name: as, concurrently: true, ifNotExists: false })
      wanted.push({ spec, command, build, declared: declaredIndexName(spec), object: { className: spec.className, name, kind: spec.kind, definition, rule: indexRule(spec, format), unique: Boolean(spec.unique) } })
    } catch (error) {
      failures.push({ className: spec.className, name: spec.name, kind: spec.kind, status: 'failed', detail: (error as Error).message })
    }
  }
  return { wanted, failures }
}

const keyOf = (object: { className: string, name: string }) => `${object.className}\u0000${object.name}`

/** The reconciler's changes, less the drop of a plain index made over duplicates: it serves until the unique one can be made. */
function plannedChanges (wanted: WantedIndex[], found: FoundIndex[], classes: string[]): ObjectChange[] {
  const fallbacks = new Set(wanted.filter((w) => w.spec.plainIfDuplicates).map((w) => keyOf({ className: w.spec.className, name: plainFallbackName(w.spec) })))
  return reconcileObjects(wanted.map((w) => w.object), found, classes).filter((change) => change.action !== 'drop' || !fallbacks.has(keyOf(change)))
}

/**
 * Invalid indexes an interrupted build left (stale: the kit's, under a name it
 * wants, or half a replacement) apart from the rest (live). One another session
 * is building right now stays live: it is that session's.
 */
function sortFound (found: FoundIndex[], wanted: WantedIndex[]): { live: FoundIndex[], stale: FoundIndex[] } {
  const wantedNames = new Set(wanted.map((w) => keyOf(w.object)))
  const isStale = (index: FoundIndex) => !index.valid && !index.building && (wantedNames.has(keyOf(index)) || index.madeByKit || isBuildingName(index.name))
  return { live: found.filter((index) => !isStale(index)), stale: found.filter(isStale) }
}

async function buildIndexes (adapter: PgAdapter, specs: IndexSpec[], classes: string[], whenFree: WhenFree): Promise<IndexReport[]> {
  const { wanted, failures } = wantedIndexes(adapter, specs)
  const reports: IndexReport[] = [...failures]
  const client = pgDatabase(adapter)!
  const bySpec = new Map(wanted.map((w) => [keyOf(w.object), w]))
  const found = await foundIndexes(client)
  const renames = await renameCutShort(cutShortRenames(found, wanted), (rename) =>
    whenFree(() => client.none('ALTER INDEX $1:name RENAME TO $2:name', [rename.from, rename.to])))
  const { live, stale } = sortFound(renamed(found, renames), wanted)
  // First the invalid leftovers of interrupted builds: dropped; those still wanted are built again below.
  const rebuilt = new Set<string>()
  for (const index of stale) {
    const command = dropConcurrentlyCommand(index.name)
    try {
      await whenFree(() => dropConcurrently(client, index.name))
      if (bySpec.has(keyOf(index))) rebuilt.add(keyOf(index))
      else reports.push({ className: index.className, name: index.name, kind: index.unique ? 'unique' : 'ordered', status: 'dropped', command, detail: `${index.name} dropped: an interrupted build had left it invalid` })
    } catch (error) {
      reports.push({ className: index.className, name: index.name, kind: index.unique ? 'unique' : 'ordered', status: 'failed', command, detail: `an interrupted build left it invalid, and it could not be dropped: ${(error as Error).message}` })
    }
  }
  const stillInvalid = new Set(stale.map(keyOf).filter((key) => bySpec.has(key) && !rebuilt.has(key)))
  const invalidLive = new Set(live.filter((index) => !index.valid).map(keyOf))
  for (const change of plannedChanges(wanted, live, classes)) {
    if (stillInvalid.has(keyOf(change))) continue // reported above
    const target = bySpec.get(keyOf(change))
    let command = target?.command
    let warn = false
    const report = (status: IndexReport['status'], detail?: string) =>
      reports.push({ className: change.className, name: change.name, kind: change.kind, status, command, detail, ...(warn ? { warn } : {}) })
    const apply = async (): Promise<[IndexReport['status'], string | undefined]> => {
      if (change.action === 'drop') {
        command = await dropIndexCommand(client, change.className, change.name)
        await dropIndex(client, change.className, change.name, whenFree)
        return ['dropped', describeChange(change)]
      }
      const { spec, object } = target!
      const mark = markOf(object)
      if (change.action === 'keep') {
        if (invalidLive.has(keyOf(change))) return ['exists', 'being built by another session (another instance booting)']
        // Parse's own classes hold Parse's own unique indexes under the same names: never claimed.
        if (change.record && !spec.className.startsWith('_')) await client.none('COMMENT ON INDEX $1:name IS $2', [change.name, mark])
        return ['exists', [renameNote(renames, change), ttlNote(spec)].filter(Boolean).join('; ') || undefined]
      }
      if (change.action === 'replace') {
        // Built beside the old one, then swapped: never a moment without an index, never a long lock.
        const temporary = buildingName(change.name)
        command = `${target!.build(temporary)}; ${await dropIndexCommand(client, change.className, change.name)}; ALTER INDEX ${quoted(temporary)} RENAME TO ${quoted(change.name)}`
        await dropConcurrently(client, temporary) // half of an interrupted replacement
        await buildConcurrently(client, temporary, target!.build(temporary))
        await dropIndex(client, change.className, change.name, whenFree)
        await whenFree(() => client.none('ALTER INDEX $1:name RENAME TO $2:name', [temporary, change.name]))
        await client.none('COMMENT ON INDEX $1:name IS $2', [change.name, mark])
        return ['replaced', describeChange(change)]
      }
      const column = spec.fields[0].name
      if (spec.kind === 'unique') {
        const twin = await uniqueIndexOn(client, spec.className, column)
        if (twin) return ['exists', `as ${twin} (a unique index on the same column under another name)`]
      }
      const fallback = spec.plainIfDuplicates ? plainFallbackName(spec) : undefined
      if (fallback && live.some((index) => index.className === spec.className && index.name === fallback) && await hasDuplicates(client, spec.className, column)) {
        warn = true
        return ['exists', `${change.name} is not unique yet: ${spec.className} still holds duplicate ${column} values; the plain index ${fallback} serves the lookups meanwhile`]
      }
      try {
        await buildConcurrently(client, change.name, target!.build(change.name))
      } catch (error) {
        if (isDuplicateName(error)) return ['exists', 'made meanwhile (another instance booting at the same time)']
        if (!isUniqueViolation(error)) throw error
        const duplicates = `${spec.className} holds duplicate values (${(error as { detail?: string }).detail ?? (error as Error).message}); the unfinished index was dropped`
        if (!fallback) throw new Error(`cannot be made unique: ${duplicates}. Remove the duplicates: the next boot tries again`)
        // Unique is what Parse means, but a database holding a duplicate must still boot, and be served by an index.
        warn = true
        const plain = createIndexSql({ ...spec, kind: 'ordered', unique: false, name: fallback }, pgFormatter(adapter), { concurrently: true, ifNotExists: false })
        command = plain
        await buildConcurrently(client, fallback, plain).catch((made) => { if (!isDuplicateName(made)) throw made })
        await client.none('COMMENT ON INDEX $1:name IS $2', [fallback, markOf({ ...object, name: fallback, definition: plain, rule: `ordered (${column}), until ${change.name} can be made`, unique: false })])
        return ['created', `${change.name} could not be made unique: ${duplicates}. The plain index ${fallback} was made instead; remove the duplicates and the next boot makes it unique`]
      }
      await client.none('COMMENT ON INDEX $1:name IS $2', [change.name, mark])
      // Afterwards: a plain index on the column (by hand, or made over duplicates) duplicates the unique one.
      if (spec.kind === 'unique') await dropConflictingIndexes(client, spec.className, column)
      if (rebuilt.has(keyOf(change))) return ['replaced', `${change.name} rebuilt: ${change.to ?? ''} (an interrupted build had left it invalid)`]
      return ['created', [describeChange(change), ttlNote(spec)].filter(Boolean).join('; ')]
    }
    try {
      report(...await whenFree(apply))
    } catch (error) {
      report('failed', (error as Error).message)
    }
  }
  return reports
}

function isUniqueViolation (error: unknown): boolean {
  return (error as { code?: unknown }).code === '23505'
}

/** A duplicate value among the rows (through the plain index on the column when there is one). */
async function hasDuplicates (client: PgClient, table: string, column: string): Promise<boolean> {
  const rows = await client.any('SELECT 1 FROM $1:name WHERE $2:name IS NOT NULL GROUP BY $2:name HAVING count(*) > 1 LIMIT 1', [table, column])
  return rows.length > 0
}

type FoundIndex = FoundObject & { valid: boolean, building: boolean }

/** The kit's indexes and every other index a declared name could collide with. */
async function foundIndexes (client: PgClient): Promise<FoundIndex[]> {
  const rows = await client.any(`
    SELECT t.relname AS "table", i.relname AS name, obj_description(i.oid, 'pg_class') AS note, x.indisunique AS "unique",
      x.indisvalid AS valid, ${BUILDING_ELSEWHERE} AS building
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    WHERE t.relnamespace = current_schema()::regnamespace AND NOT x.indisprimary`)
  return rows.map((row) => {
    const mark = readMark(row.note as string | null)
    return {
      className: row.table as string,
      name: row.name as string,
      madeByKit: mark !== undefined,
      definition: mark?.definition,
      rule: mark?.rule,
      unique: Boolean(row.unique),
      valid: Boolean(row.valid),
      building: Boolean(row.building)
    }
  })
}

/** A unique index made as a table constraint (by hand, or by an older kit) goes with the constraint. */
async function isConstraint (client: PgClient, table: string, name: string): Promise<boolean> {
  const constraint = await client.any(`
    SELECT 1 FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
    WHERE t.relname = $1 AND c.conname = $2 AND t.relnamespace = current_schema()::regnamespace`, [table, name])
  return constraint.length > 0
}

async function dropIndexCommand (client: PgClient, table: string, name: string): Promise<string> {
  return await isConstraint(client, table, name) ? `ALTER TABLE ${quoted(table)} DROP CONSTRAINT ${quoted(name)}` : dropConcurrentlyCommand(name)
}

/** DROP INDEX CONCURRENTLY; a constraint cannot go that way: dropped with a brief lock, waited for politely. */
async function dropIndex (client: PgClient, table: string, name: string, whenFree: WhenFree): Promise<void> {
  if (await isConstraint(client, table, name)) await whenFree(() => client.none('ALTER TABLE $1:name DROP CONSTRAINT $2:name', [table, name]))
  else await dropConcurrently(client, name)
}
/** What would be run, for a database that cannot be reached: nothing is applied. */
export function printPostgresIndexes (adapter: PgAdapter, specs: IndexSpec[]): IndexReport[] {
  const format: Format = pgFormatter(adapter)
  return specs.map((spec): IndexReport => {
    try {
      const { name, command } = postgresIndexCommand(spec, format)
      return { className: spec.className, kind: spec.kind, status: 'printed', name, command }
    } catch (error) {
      return { className: spec.className, name: spec.name, kind: spec.kind, status: 'failed', detail: (error as Error).message }
    }
  })
}

function ttlNote (spec: IndexSpec): string | undefined {
  return spec.kind === 'ttl' ? 'PostgreSQL has no expiring index: an ordinary index was made, and the kit\'s kitExpireRows job deletes expired rows (every minute unless jobs.ttlSweep says otherwise)' : undefined
}

/** The name of a whole-table unique index on exactly this column, if there is one. */
async function uniqueIndexOn (client: PgClient, table: string, column: string): Promise<string | undefined> {
  const rows = await client.any(`
    SELECT i.relname AS name FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
    WHERE t.relname = $1 AND a.attname = $2 AND x.indnatts = 1 AND x.indisunique AND NOT x.indisprimary AND x.indpred IS NULL AND x.indexprs IS NULL`, [table, column])
  return rows[0]?.name as string | undefined
}

/** A plain index on a column now unique duplicates the unique one: dropped. */
async function dropConflictingIndexes (client: PgClient, table: string, column: string): Promise<void> {
  const rows = await client.any(`
    SELECT i.relname AS name FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
    WHERE t.relname = $1 AND a.attname = $2 AND x.indnatts = 1 AND NOT x.indisunique AND NOT x.indisprimary`, [table, column])
  for (const row of rows) await dropConcurrently(client, row.name as string)
}
