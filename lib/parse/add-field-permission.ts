// Parse's Defined Schemas migration sets the `addField` permission of every
// class it writes to `{}` (SchemaMigrations/DefinedSchemas.js, handleCLP): the
// classes the definitions list, and also every stored class they do not list
// (enforceCLPForNonProvidedClass: `_User`, `_Session`, classes clients
// created). After the first restart no client could add a field anywhere,
// although nothing asked for that (lockSchemas is the kit's switch for it).
//
// Here the migration keeps an `addField` it is given: a definition that names
// one keeps it, and a stored class no definition lists is written back with the
// permissions it already has (so the write changes nothing and
// unchanged-schema.ts skips it). A definition without `addField` still closes
// it, as Parse does.
import { parseInternals, type ParseInternals } from './internals.js'

const WRAPPED = Symbol.for('fastify-parse-kit.add-field-permission')

/** Wraps DefinedSchemas#handleCLP (once per process: DefinedSchemas is Parse's class). */
export function keepGivenAddField (): void {
  const migration = parseInternals().DefinedSchemas.prototype as ParseInternals['DefinedSchemas']['prototype'] & { [WRAPPED]?: true }
  if (migration[WRAPPED]) return
  migration[WRAPPED] = true
  const handleCLP = migration.handleCLP
  migration.handleCLP = function (local, schema, cloud) {
    handleCLP.call(this, local, schema, cloud)
    const given = local.classLevelPermissions?.addField
    if (given !== undefined) schema._clp = { ...schema._clp, addField: given }
  }
}
