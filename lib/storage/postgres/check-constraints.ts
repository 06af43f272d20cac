// CHECK constraints on PostgreSQL: the declared field rules made real, so the
// database refuses bad rows itself, even from writes that bypass the code.
import type { ModelDefinition } from '../../model/registry.js'
import type { IndexReport } from '../indexes/plan.js'
import type { PgQueries } from '../../parse/internals.js'
import { pgDatabase, pgFormatter } from '../../parse/adapter-internals.js'
import { runSchemaWork, TableBusyError, type WhenFree } from './schema-work.js'
import { quoted } from './concurrent-index.js'
import { checkConstraintName } from './identifiers.js'
import { checkExpression, constraintRule, postgresConstraintCommands, postgresPattern } from './check-sql.js'
import { markOf, readMark } from './kit-mark.js'
import { cutShortRenames, renameCutShort, renamed, renameNote } from './cut-short-names.js'
import { describeChange, reconcileObjects, type FoundObject, type ObjectChange, type WantedObject } from '../indexes/reconcile.js'

type PgAdapter = object
type PgClient = PgQueries

type Format = (query: string, values?: unknown) => string

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
