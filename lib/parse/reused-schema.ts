// Parse builds a SchemaController for every query and every write (a fresh
// Config, a SchemaData with a getter per class, each class's permissions
// cloned on first use): a large share of a small find or create. The
// controller is made from Parse's schema cache, whose entries Parse replaces
// (never edits) when a schema changes. An operation may therefore take the
// controller an earlier one built, for as long as the cache still holds the
// very entries that controller was built from.
//
// What an operation changes on its controller must stay its own. A write's
// validation reassigns the controller's own properties (schemaData, and the
// reload promise, when it adds a field or a class); a write therefore takes a
// view of the shared controller (writeView), on which those assignments land.
// One read path edits the shared data itself: with `keys`, protected fields by
// pointer ("userField:…") park temporary keys on the class's permissions, so
// with any such rule in the schema every operation keeps its own controller.
import { parseInternals } from './internals.js'
import type { SchemaController } from './server-shapes.js'
import { fastPathsOn } from './fast-path-switch.js'

/**
 * The last controller loaded for sharing, the schema cache entries it was built
 * from, and the schema data it held then (one per running kit).
 */
export interface SchemaMemo { entries?: readonly unknown[], controller?: Promise<SchemaController>, built?: SchemaController, data?: unknown }

interface Permissions { classLevelPermissions?: { protectedFields?: Record<string, unknown> } }

/** Whether a read may park temporary keys on this controller's permissions (protected fields by pointer). */
function parksKeys (entries: readonly unknown[], controller: SchemaController): boolean {
  const byPointer = (rules: Record<string, unknown> | undefined) => Object.keys(rules ?? {}).some((key) => key.startsWith('userField:'))
  const configured = controller.protectedFields ?? {}
  return entries.some((entry) => byPointer((entry as Permissions).classLevelPermissions?.protectedFields)) ||
    Object.values(configured).some(byPointer)
}

const sameEntries = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((entry, i) => entry === b[i])

/**
 * The memo's controller while Parse's schema cache is unchanged since it was
 * built and the controller still holds the data it was built with (a schema
 * hook's reload replaces it, emptied when that reload fails); otherwise
 * `load()`'s, remembered when the cache held the same entries before and after
 * the load (so they are the ones it was built from).
 */
export function reusedSchema (memo: SchemaMemo, load: () => Promise<SchemaController>): Promise<SchemaController> {
  if (!fastPathsOn()) return load()
  const before = parseInternals().SchemaCache.default.all()
  if (memo.controller && memo.entries && before.length > 0 && sameEntries(memo.entries, before) && dataOf(memo.built) === memo.data) return memo.controller
  const loading = load()
  loading.then((controller) => {
    const after = parseInternals().SchemaCache.default.all()
    if (before.length > 0 && sameEntries(before, after) && !parksKeys(after, controller)) {
      Object.assign(memo, { entries: after, controller: loading, built: controller, data: dataOf(controller) })
    }
  }, () => {})
  return loading
}

const dataOf = (controller: SchemaController | undefined) => (controller as { schemaData?: unknown } | undefined)?.schemaData

/**
 * A write's own face of a shared controller: every method and all data come
 * from the shared one until the write reassigns a property (a reload after it
 * added a field), which then belongs to this view alone.
 */
export function writeView (controller: SchemaController): SchemaController {
  return Object.create(controller) as SchemaController
}
