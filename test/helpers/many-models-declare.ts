// N generated model classes, declared as a model file would declare them, for
// the boot processes of test/helpers/many-models-node.ts.
import { BaseModel, ParseClass, ParseField } from '../../lib/index.js'

/**
 * N classes `Gen0…`, each with three fields (one indexed), a compound index and
 * a class-level permission. A later `version` changes a few of them, each kind
 * of change once: 2 adds a field to Gen0, opens Gen1's delete to everyone and
 * turns Gen2's compound index around; 3 also adds a field to Gen3 and closes
 * Gen4's create to anonymous callers.
 */
export function declareManyModels (n: number, version = 1): Array<typeof BaseModel> {
  const models: Array<typeof BaseModel> = []
  for (let i = 0; i < n; i++) {
    const name = `Gen${i}`
    const Generated = class extends BaseModel {}
    Object.defineProperty(Generated, 'name', { value: name })
    ParseField({ type: 'String', required: true })(Generated.prototype, 'title')
    ParseField({ type: 'Number', index: 1 })(Generated.prototype, 'rank')
    ParseField({ type: 'Date' })(Generated.prototype, 'due')
    if ((version >= 2 && i === 0) || (version >= 3 && i === 3)) ParseField({ type: 'String' })(Generated.prototype, 'note')
    const clp: Record<string, Record<string, true>> = { delete: version >= 2 && i === 1 ? { '*': true } : { requiresAuthentication: true } }
    if (version >= 3 && i === 4) clp.create = { requiresAuthentication: true }
    models.push(ParseClass(name, {
      clp,
      compoundIndexes: [{ name: `${name}_title_due`, fields: version >= 2 && i === 2 ? ['due', 'title'] : ['title', 'due'] }]
    })(Generated))
  }
  return models
}
