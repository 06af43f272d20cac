// Indexes and CHECK constraints on PostgreSQL. Parse stores a class as a
// table whose columns are named like the fields (pointers hold the target's
// objectId, GeoPoints are `point`, Numbers `double precision`).
import type { FieldDefinition } from '../../model/field-options.js'
import type { ModelDefinition } from '../../model/registry.js'
import type { IndexReport, IndexSpec } from '../indexes/plan.js'
import type { PgQueries } from '../../parse/internals.js'
import { pgDatabase, pgFormatter } from '../../parse/adapter-internals.js'
import { runSchemaWork, TableBusyError, type WhenFree } from './schema-work.js'
import { BUILDING_ELSEWHERE, buildConcurrently, buildingName, dropConcurrently, dropConcurrentlyCommand, isBuildingName, isDuplicateName, quoted } from './concurrent-index.js'
import { plainFallbackName as fallbackSpecName } from '../indexes/sessions.js'
import { checkConstraintName, pgIdentifier } from './identifiers.js'
import { postgresRegex, type PostgresRegex } from '../../model/postgres-regex.js'
import { cutShortRenames, renamed, type CutShortRename } from './cut-short-names.js'
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

/** Renames what an older kit made under a cut-short name; one that fails is left to the ordinary path (built anew, the old one dropped). */
async function renameCutShort (renames: CutShortRename[], rename: (rename: CutShortRename) => Promise<unknown>): Promise<CutShortRename[]> {
  const done: CutShortRename[] = []
  for (const one of renames) {
    try {
      await rename(one)
      done.push(one)
    } catch {} // left under its old name: replaced like any other
  }
  return done
}

/** The note of a kept object that was renamed. */
function renameNote (renames: CutShortRename[], change: { className: string, name: string }): string | undefined {
  const rename = renames.find((r) => r.className === change.className && r.to === change.name)
  return rename && `renamed from ${rename.from} (PostgreSQL had cut the name at 63 bytes)`
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

/** The index in words: "unique (sku)", "ordered (rank desc)", "compound (code) unique where active = true". */
function indexRule (spec: IndexSpec, format: Format): string {
  const columns = spec.fields.map((field) => `${field.name}${field.direction === -1 ? ' desc' : ''}`).join(', ')
  const parts = [spec.kind, `(${columns})`]
  if (spec.kind !== 'unique' && spec.unique) parts.push('unique')
  if (spec.sparse) parts.push('sparse')
  if (spec.partial) parts.push(`where ${partialSql(spec.partial, format)}`)
  return parts.join(' ')
}

/**
 * The name, the SQL that makes a planned index (built CONCURRENTLY: what is
 * printed when the database is away) and its definition: what decides whether
 * a stored index is the same one, kept in the form earlier versions recorded so
 * that an upgrade rebuilds nothing.
 */
export function postgresIndexCommand (spec: IndexSpec, format: Format): { name: string, command: string, definition: string } {
  // The definition keeps the declared name, as older kits recorded it: it is the record's key, not a command that runs.
  const name = pgIdentifier(declaredIndexName(spec))
  const definition = spec.kind === 'unique'
    ? format('ALTER TABLE $1:name ADD CONSTRAINT $2:name UNIQUE ($3:name)', [spec.className, declaredIndexName(spec), spec.fields[0].name])
    : createIndexSql(spec, format)
  return { name, definition, command: createIndexSql(spec, format, { name, concurrently: true }) }
}

/** The CHECK constraint of each constrained field: its name and the exact SQL. */
export function postgresConstraintCommands (models: ModelDefinition[], format: Format): Array<{ className: string, name: string, command: string }> {
  const commands: Array<{ className: string, name: string, command: string }> = []
  for (const model of models) {
    for (const field of model.fields.values()) {
      const check = checkExpression(field, format)
      if (!check) continue
      const name = checkConstraintName(model.className, field.name)
      commands.push({ className: model.className, name, command: format(`ALTER TABLE $1:name ADD CONSTRAINT $2:name CHECK (${check})`, [model.className, name]) })
    }
  }
  return commands
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

export function printPostgresConstraints (adapter: PgAdapter, models: ModelDefinition[]): IndexReport[] {
  const format: Format = pgFormatter(adapter)
  return postgresConstraintCommands(models, format).map(({ className, name, command }) => ({ className, name, kind: 'validator', status: 'printed', command }))
}

/** CHECK constraints for enum, min/max, integer, maxLength/minLength and pattern: the database refuses bad rows itself. */
export async function applyPostgresConstraints (adapter: PgAdapter, models: ModelDefinition[]): Promise<IndexReport[]> {
  // Adding a CHECK reads the whole table: no request query bound either.
  return runSchemaWork(adapter, (unbounded, whenFree) => reconcileConstraints(unbounded, models, whenFree))
}

/** What the next boot would do to the CHECK constraints, without doing it. */
export async function planPostgresConstraints (adapter: PgAdapter, models: ModelDefinition[]): Promise<ObjectChange[]> {
  const wanted = wantedConstraints(adapter, models)
  const found = await foundConstraints(pgDatabase(adapter)!)
  return reconcileObjects(wanted.map((w) => w.object), renamed(found, cutShortRenames(found, wanted)), models.map((model) => model.className))
}

interface WantedConstraint {
  object: WantedObject
  /** Its name before the kit shortened it. */
  declared: string
  command: string
  check: string
  /** The regular expressions of its `pattern` rules, as PostgreSQL gets them. */
  patterns: string[]
}

function wantedConstraints (adapter: PgAdapter, models: ModelDefinition[]): WantedConstraint[] {
  const format: Format = pgFormatter(adapter)
  const wanted: WantedConstraint[] = []
  for (const model of models) {
    for (const field of model.fields.values()) {
      const check = checkExpression(field, format)
      if (!check) continue
      const name = checkConstraintName(model.className, field.name)
      // By hand, the steps the boot takes: added for new writes, then the existing rows checked.
      const command = format(`ALTER TABLE $1:name ADD CONSTRAINT $2:name CHECK (${check}) NOT VALID; ALTER TABLE $1:name VALIDATE CONSTRAINT $2:name`, [model.className, name])
      const pattern = postgresPattern(field)
      wanted.push({ check, command, declared: `${model.className}_${field.name}_check`, patterns: pattern === undefined ? [] : [pattern.source], object: { className: model.className, name, kind: 'validator', definition: check, rule: constraintRule(field) } })
    }
  }
  return wanted
}

async function reconcileConstraints (adapter: PgAdapter, models: ModelDefinition[], whenFree: WhenFree): Promise<IndexReport[]> {
  const wanted = wantedConstraints(adapter, models)
  const byName = new Map(wanted.map((w) => [`${w.object.className}\u0000${w.object.name}`, w]))
  const reports: IndexReport[] = []
  const stored = await foundConstraints(pgDatabase(adapter)!)
  const renames = await renameCutShort(cutShortRenames(stored, wanted), (rename) =>
    whenFree(() => pgDatabase(adapter)!.none('ALTER TABLE $1:name RENAME CONSTRAINT $2:name TO $3:name', [rename.className, rename.from, rename.to])))
  const found = renamed(stored, renames)
  const unchecked = new Set(found.filter((object) => !object.validated).map((object) => `${object.className}\u0000${object.name}`))
  for (const change of reconcileObjects(wanted.map((w) => w.object), found, models.map((model) => model.className))) {
    const key = `${change.className}\u0000${change.name}`
    const target = byName.get(key)
    const command = target?.command ?? pgFormatter(adapter)('ALTER TABLE $1:name DROP CONSTRAINT $2:name', [change.className, change.name])
    const report = (status: IndexReport['status'], detail?: string) =>
      reports.push({ className: change.className, name: change.name, kind: 'validator', status, command, detail })
    const comment = (client: PgClient) => client.none('COMMENT ON CONSTRAINT $1:name ON $2:name IS $3', [change.name, change.className, markOf(target!.object)])
    const apply = async (): Promise<[IndexReport['status'], string | undefined]> => {
      const client = pgDatabase(adapter)!
      if (change.action === 'drop') {
        await client.none(command)
        return ['dropped', describeChange(change)]
      }
      if (change.action === 'keep') {
        if (change.record) await comment(client)
        return ['exists', renameNote(renames, change)]
      }
      // Added NOT VALID first (a brief lock; every write from now on is checked), then the
      // existing rows are validated under a lock that lets reads and writes go on.
      await client.tx(async (t) => {
        // A pattern PostgreSQL cannot compile would fail every write (and NOT VALID checks nothing now): refused here.
        for (const pattern of target!.patterns) await t.any("SELECT '' ~ $1 AS compiles", [pattern])
        const drop = change.action === 'replace' ? 'DROP CONSTRAINT $2:name, ' : ''
        await t.none(`ALTER TABLE $1:name ${drop}ADD CONSTRAINT $2:name CHECK (${target!.check}) NOT VALID`, [change.className, change.name])
        await comment(t)
      })
      return [change.action === 'replace' ? 'replaced' : 'created', describeChange(change)]
    }
    try {
      const [status, detail] = await whenFree(apply)
      const validation = () => validate(pgDatabase(adapter)!, change.className, change.name, target!.check, whenFree)
      if (status === 'created' || status === 'replaced') report(status, detail! + await validation())
      // Kept while rows saved before it broke it: checked again, and told again, at every boot.
      else if (status === 'exists' && unchecked.has(key)) report(status, `${change.name} unchanged${(await validation()) || '; every existing row now keeps it'}`)
      else report(status, detail)
    } catch (error) {
      report('failed', (error as Error).message)
    }
  }
  return reports
}

/**
 * Rows saved under an old rule may break the new one: the rule then holds for
 * every write from now on, and the rows are counted, not refused.
 */
async function validate (client: PgClient, table: string, name: string, check: string, whenFree: WhenFree): Promise<string> {
  try {
    await whenFree(() => client.none('ALTER TABLE $1:name VALIDATE CONSTRAINT $2:name', [table, name]))
    return ''
  } catch (error) {
    if (error instanceof TableBusyError) return `; the existing rows are not checked yet (the table stayed busy): run ALTER TABLE ${quoted(table)} VALIDATE CONSTRAINT ${quoted(name)} by hand`
    const code = String((error as { code?: unknown }).code)
    if (code !== '23514') {
      // A rule the database cannot evaluate (an invalid expression: SQLSTATE classes 22, 42)
      // must not stay behind to fail every write.
      if (/^(22|42)/.test(code)) await whenFree(() => client.none('ALTER TABLE $1:name DROP CONSTRAINT IF EXISTS $2:name', [table, name])).catch(() => {})
      throw error
    }
  }
  const [{ count }] = await client.any(`SELECT count(*)::int AS count FROM $1:name WHERE NOT (${check})`, [table])
  return `; ${count} existing row${count === 1 ? '' : 's'} break${count === 1 ? 's' : ''} it: kept, and refused when next saved unless corrected`
}

/**
 * CHECK constraints the kit made (they carry its mark). One without the mark
 * under a name the kit gives was made by an earlier version: it is replaced,
 * since what it checks is unknown.
 */
async function foundConstraints (client: PgClient): Promise<Array<FoundObject & { validated: boolean }>> {
  const rows = await client.any(`
    SELECT t.relname AS "table", c.conname AS name, obj_description(c.oid, 'pg_constraint') AS note, c.convalidated AS validated
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
    WHERE c.contype = 'c' AND t.relnamespace = current_schema()::regnamespace`)
  return rows.map((row) => {
    const mark = readMark(row.note as string | null)
    return { className: row.table as string, name: row.name as string, madeByKit: mark !== undefined, definition: mark?.definition ?? '(unrecorded)', rule: mark?.rule, validated: Boolean(row.validated) }
  })
}

/** The field's database rules in words: "enum a,b; maxLength 10; min 0". */
export function constraintRule (field: FieldDefinition): string {
  const rules: string[] = []
  if (field.type === 'String') {
    if (field.enum) rules.push(`enum ${field.enum.join(',')}`)
    if (field.maxLength !== undefined) rules.push(`maxLength ${field.maxLength}`)
    if (field.minLength !== undefined) rules.push(`minLength ${field.minLength}`)
    if (field.pattern !== undefined) rules.push(`pattern ${String(field.pattern)}`)
  }
  if (field.type === 'Number') {
    if (field.min !== undefined) rules.push(`min ${field.min}`)
    if (field.max !== undefined) rules.push(`max ${field.max}`)
    if (field.integer) rules.push('integer')
  }
  return rules.join('; ')
}

/** The record the kit leaves on what it made, in the object's COMMENT. */
const MARK = 'fastify-parse-kit '

function markOf (object: WantedObject): string {
  return MARK + JSON.stringify({ definition: object.definition, rule: object.rule })
}

function readMark (note: string | null): { definition: string, rule: string } | undefined {
  if (!note?.startsWith(MARK)) return undefined
  try {
    const mark = JSON.parse(note.slice(MARK.length)) as { definition?: unknown, rule?: unknown }
    return typeof mark.definition === 'string' ? { definition: mark.definition, rule: String(mark.rule ?? '') } : undefined
  } catch {
    return undefined
  }
}

/** A String field's `pattern` as the whole-value regular expression PostgreSQL checks, in its dialect. */
function postgresPattern (field: FieldDefinition): PostgresRegex | undefined {
  if (field.type !== 'String' || field.pattern === undefined) return undefined
  return postgresRegex(field.pattern)
}

export function checkExpression (field: FieldDefinition, format: (query: string, values?: unknown) => string): string | undefined {
  const column = format('$1:name', [field.name])
  const rules: string[] = []
  if (field.type === 'String') {
    if (field.enum) rules.push(format(`${column} IN ($1:csv)`, [field.enum]))
    if (field.maxLength !== undefined) rules.push(`char_length(${column}) <= ${field.maxLength}`)
    if (field.minLength !== undefined) rules.push(`char_length(${column}) >= ${field.minLength}`)
    const pattern = postgresPattern(field)
    if (pattern !== undefined) rules.push(format(`${column} ${pattern.caseInsensitive ? '~*' : '~'} $1`, [pattern.source]))
  }
  if (field.type === 'Number') {
    if (field.min !== undefined) rules.push(`${column} >= ${Number(field.min)}`)
    if (field.max !== undefined) rules.push(`${column} <= ${Number(field.max)}`)
    if (field.integer) rules.push(`${column} = trunc(${column})`)
  }
  return rules.length > 0 ? `${column} IS NULL OR (${rules.join(' AND ')})` : undefined
}

/**
 * The CREATE INDEX statement of a planned index. By default the form earlier
 * versions recorded (its definition); the boot builds it CONCURRENTLY, under
 * `name` while a replacement is built beside the old index.
 */
export function createIndexSql (spec: IndexSpec, format: Format, options: { name?: string, concurrently?: boolean, ifNotExists?: boolean } = {}): string {
  const columns = spec.fields.map((field) => format('$1:name', [field.name]))
  const table = format('$1:name', [spec.className])
  const name = format('$1:name', [options.name ?? spec.name])
  const create = (unique: boolean) => `CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${options.concurrently ? 'CONCURRENTLY ' : ''}${options.ifNotExists === false ? '' : 'IF NOT EXISTS '}${name} ON ${table}`
  const where = spec.partial ? ` WHERE ${partialSql(spec.partial, format)}` : ''
  switch (spec.kind) {
    case 'geo':
      return `${create(false)} USING GIST (${columns[0]})`
    case 'text':
      // The expression Parse's $text search uses, so its queries can use the index.
      return `${create(false)} USING GIN (${columns.map((column) => `to_tsvector('english', ${column})`).join(', ')})`
    case 'acl':
      // The overlap (&&) branch of the row-ACL filter by GIN; the IS NULL branch by a partial index.
      return spec.partial ? `${create(false)} (${columns[0]})${where}` : `${create(false)} USING GIN (${columns[0]})`
    default: {
      const keys = spec.fields.map((field, i) => `${columns[i]}${field.direction === -1 ? ' DESC' : ''}`).join(', ')
      return `${create(Boolean(spec.unique))} (${keys})${where}`
    }
  }
}

const SQL_OPERATORS: Record<string, string> = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=', $ne: '<>' }

/** A partial index filter in Parse query form ({ field: value }, $exists, $gt…, $in) as a SQL condition. */
export function partialSql (filter: Record<string, unknown>, format: (query: string, values?: unknown) => string): string {
  const parts: string[] = []
  for (const [field, condition] of Object.entries(filter)) {
    const column = format('$1:name', [field])
    if (condition === null || typeof condition !== 'object' || condition instanceof Date) {
      parts.push(condition === null ? `${column} IS NULL` : format(`${column} = $1`, [condition]))
      continue
    }
    for (const [operator, value] of Object.entries(condition as Record<string, unknown>)) {
      if (operator === '$exists') parts.push(`${column} IS ${value ? 'NOT ' : ''}NULL`)
      else if (operator === '$in') parts.push(format(`${column} IN ($1:csv)`, [value]))
      else if (SQL_OPERATORS[operator]) parts.push(format(`${column} ${SQL_OPERATORS[operator]} $1`, [value]))
      else throw new Error(`partial index on ${field}: ${operator} has no PostgreSQL translation (use =, $exists, $gt, $gte, $lt, $lte, $ne or $in)`)
    }
  }
  return parts.join(' AND ')
}

/** The plain index made over duplicates, under a name PostgreSQL keeps whole. */
function plainFallbackName (spec: IndexSpec): string {
  return pgIdentifier(fallbackSpecName(spec))
}

function declaredIndexName (spec: IndexSpec): string {
  return spec.kind === 'unique' ? uniqueName(spec) : spec.name
}

function uniqueName (spec: IndexSpec): string {
  return `${spec.className}_unique_${spec.fields[0].name}` // the name Parse's ensureUniqueness gives it
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
