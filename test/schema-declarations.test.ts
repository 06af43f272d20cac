// What needs no database: declarations that could never be made real are
// refused at import; the comparison that decides what a boot changes; and the
// 142 a database-side refusal becomes. And that none of it loads Parse Server.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import Parse from 'parse/node'
import { BaseModel, ParseClass, ParseField, type ClassOptions, type FieldOptions } from '../lib/index.js'
import { describeChange, reconcileObjects, type FoundObject, type WantedObject } from '../lib/storage/indexes/reconcile.js'
import { constraintViolation } from '../lib/storage/constraint-violation.js'
import { diffSchema, formatPlan, planExitCode, type StoredClass } from '../lib/model/schema-diff.js'
import type { ParseClassSchema } from '../lib/model/schema-config.js'
import { modelByName } from '../lib/model/registry.js'

t.test('importing the package, declaring a model, a route and a job, and a boot refused for an option load no Parse Server', async (t) => {
  // A fresh process: this one has loaded what tap and the imports above load.
  const child = fileURLToPath(new URL('./helpers/declare-without-parse.ts', import.meta.url))
  const output = execFileSync(process.execPath, ['--import', 'tsx/esm', child], { encoding: 'utf8' })
  const report = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as { declared: string[], refusal: string, parseServerLoaded: boolean }
  t.same(report.declared, ['Declared', 'DeclaredRoutes', 'DeclaredJobs'], 'the declarations ran')
  t.equal(report.refusal, 'FPK_ERR_OPTION_UNKNOWN', 'the boot was refused for its option')
  t.equal(report.parseServerLoaded, false, "parse-server's main module is not in require.cache")
})

t.test('declarations the database could never follow are refused at import, naming class and field', async (t) => {
  const declareClass = (options: ClassOptions) => () => {
    class Probe extends BaseModel {}
    ParseField({ type: 'String' })(Probe.prototype, 'title')
    ParseField({ type: 'Number' })(Probe.prototype, 'rank')
    ParseClass('Probe', options)(Probe)
  }
  t.throws(declareClass({ compoundIndexes: [{ fields: ['title'], name: 'Probe_x' }, { fields: ['rank'], name: 'Probe_x' }] }),
    { code: 'FPK_ERR_CLASS_OPTION_INVALID', message: /^@ParseClass\('Probe'\) on Probe: compoundIndexes\[1\] has the name "Probe_x" of compoundIndexes\[0\]; give each index its own name$/ })
  t.throws(declareClass({ compoundIndexes: [{ fields: ['title', 'rank'] }, { fields: ['title', 'rank'] }] }),
    { code: 'FPK_ERR_CLASS_OPTION_INVALID', message: /compoundIndexes\[1\] is the same index as compoundIndexes\[0\]/ })
  t.throws(declareClass({ compoundIndexes: [{ fields: ['title'], partial: { active: true } }] }),
    { code: 'FPK_ERR_CLASS_OPTION_INVALID', message: /compoundIndexes\[0\]\.partial names "active", which is not a declared field/ })
  t.throws(declareClass({ compoundIndexes: [{ fields: ['title'], partial: { title: { $regex: '^x' } } }] }),
    { code: 'FPK_ERR_CLASS_OPTION_INVALID', message: /compoundIndexes\[0\]\.partial\.title: \$regex cannot filter a partial index \(use a value, \$exists/ })
  t.doesNotThrow(declareClass({ compoundIndexes: [{ fields: ['title'], partial: { rank: { $gt: 0 }, createdAt: { $exists: true } } }] }), 'supported operators and built-in fields pass')

  const declareField = (name: string, options: FieldOptions) => () => {
    class Probe extends BaseModel {}
    ParseField(options)(Probe.prototype, name)
  }
  t.throws(declareField('owner', { type: 'Pointer', targetClass: '_Secret' }),
    { code: 'FPK_ERR_FIELD_OPTION_INVALID', message: /^@ParseField Probe\.owner: option "targetClass" names "_Secret", which is not a class Parse can point to/ })
  t.doesNotThrow(declareField('owner', { type: 'Pointer', targetClass: '_User' }), 'a Parse system class is fine')
  for (const name of ['hasOwnProperty', 'toString', 'valueOf', 'constructor']) {
    t.throws(declareField(name, { type: 'String' }),
      { code: 'FPK_ERR_MODEL_DECLARATION', message: new RegExp(`^@ParseField Probe\\.${name}: "${name}" is a member of every JavaScript object`) }, name)
  }
})

t.test('two model classes for one Parse class are refused at import, naming both', async (t) => {
  @ParseClass('DupNote')
  class DupNote extends BaseModel {
    @ParseField({ type: 'String', required: true }) declare title: string
  }
  await t.rejects(import('./helpers/second-note-model.js'), {
    code: 'FPK_ERR_MODEL_DECLARATION',
    message: /^@ParseClass\('DupNote'\) on DupNote \(test\/helpers\/second-note-model\.ts\): the Parse class "DupNote" is already declared by DupNote \(test\/schema-declarations\.test\.ts\); declare each Parse class once/
  }, 'another file')
  t.throws(() => ParseClass('DupNote')(class Note extends BaseModel {}),
    { code: 'FPK_ERR_MODEL_DECLARATION', message: /on Note \(test\/schema-declarations\.test\.ts\): the Parse class "DupNote" is already declared by DupNote/ }, 'another class in the same file')
  t.equal(modelByName('DupNote')?.fields.has('title'), true, 'the first declaration keeps its fields')
  t.doesNotThrow(() => ParseClass('DupNote')(DupNote), 'the same class from the same file again is a re-declaration (a newer version in a test)')
})

t.test('reconciling: created, kept, replaced, dropped; what the kit did not make is left alone', async (t) => {
  const wanted: WantedObject[] = [
    { className: 'Mig', name: 'Mig_kind_check', kind: 'validator', definition: "kind IN ('a','b','c')", rule: 'enum a,b,c' },
    { className: 'Mig', name: 'Mig_name_check', kind: 'validator', definition: 'len <= 5', rule: 'maxLength 5' },
    { className: 'Mig', name: 'Mig_new_check', kind: 'validator', definition: 'x', rule: 'min 1' },
    { className: 'Mig', name: 'Mig_ab', kind: 'compound', definition: 'CREATE INDEX (b, a)', rule: 'compound (b, a)', unique: false }
  ]
  const found: FoundObject[] = [
    { className: 'Mig', name: 'Mig_kind_check', madeByKit: true, definition: "kind IN ('a','b')", rule: 'enum a,b' },
    { className: 'Mig', name: 'Mig_name_check', madeByKit: true, definition: 'len <= 5', rule: 'maxLength 5' },
    { className: 'Mig', name: 'Mig_qty_check', madeByKit: true, definition: 'qty >= 0', rule: 'min 0' },
    { className: 'Mig', name: 'Mig_ab', madeByKit: true, definition: 'CREATE UNIQUE INDEX (a, b)', rule: 'compound (a, b) unique', unique: true },
    { className: 'Mig', name: 'Mig_unique_code', madeByKit: true, definition: 'UNIQUE (code)', rule: 'unique (code)', unique: true },
    { className: 'Mig', name: 'by_hand', madeByKit: false, unique: true }
  ]
  const changes = reconcileObjects(wanted, found)
  t.same(changes.map((c) => [c.name, c.action, c.destructive]), [
    ['Mig_kind_check', 'replace', false],
    ['Mig_name_check', 'keep', false],
    ['Mig_new_check', 'create', false],
    ['Mig_ab', 'replace', true],
    ['Mig_qty_check', 'drop', false],
    ['Mig_unique_code', 'drop', true]
  ], 'an index that stops being unique, and a dropped unique index, are destructive')
  t.same(changes.map(describeChange), [
    'Mig_kind_check replaced: enum a,b → a,b,c',
    'Mig_name_check unchanged',
    'Mig_new_check created: min 1',
    'Mig_ab replaced: compound (a, b) unique → compound (b, a)',
    'Mig_qty_check dropped: min 0 (no longer declared)',
    'Mig_unique_code dropped: unique (code) (no longer declared)'
  ])
  const elsewhere = reconcileObjects([], [{ className: 'Gone', name: 'Gone_unique_x', madeByKit: true, unique: true }], ['Mig'])
  t.same(elsewhere, [], 'a class no model declares keeps what the kit made on it')
  const several = reconcileObjects([{ className: 'M', name: 'M_f_check', kind: 'validator', definition: 'new', rule: 'maxLength 5; enum a' }],
    [{ className: 'M', name: 'M_f_check', madeByKit: true, definition: 'old', rule: 'maxLength 10; enum a; min 1' }])
  t.equal(describeChange(several[0]), 'M_f_check replaced: maxLength 10 → 5; min 1 → none', 'only the rules that changed')
  const unrecorded = reconcileObjects([{ className: 'M', name: 'M_1', kind: 'ordered', definition: 'd', rule: 'ordered (f)' }], [{ className: 'M', name: 'M_1', madeByKit: false }])
  t.match(unrecorded[0], { action: 'keep', record: true }, 'an index of that name made before the kit kept records is taken as it is, and recorded')
})

t.test('a database refusal becomes 142 in validateOrThrow\'s words', async (t) => {
  @ParseClass('Refused')
  class Refused extends BaseModel {
    @ParseField({ type: 'String', enum: ['a', 'b'] }) declare kind: string
    @ParseField({ type: 'Number', min: 0, integer: true }) declare qty: number
    @ParseField({ type: 'Pointer', targetClass: '_User' }) declare owner: unknown
  }
  t.ok(Refused)
  const pg = constraintViolation({ code: '23514', table: 'Refused', constraint: 'Refused_kind_check' }, 'Refused', { kind: 'z' })
  t.same([pg?.code, pg?.message], [Parse.Error.VALIDATION_ERROR, 'Refused is invalid: kind must be one of a, b'], 'PostgreSQL CHECK, from the value')
  const increment = constraintViolation({ code: '23514', table: 'Refused', constraint: 'Refused_qty_check' }, 'Refused', { qty: { __op: 'Increment', amount: -5 } })
  t.equal(increment?.message, 'Refused is invalid: qty must be a whole number; qty must be at least 0', 'the value unknown: every rule of the field')
  // MongoDB 5+ says which properties broke the $jsonSchema (errInfo.details).
  const mongo = constraintViolation({
    code: 121,
    errInfo: { details: { operatorName: '$jsonSchema', schemaRulesNotSatisfied: [{ operatorName: 'properties', propertiesNotSatisfied: [{ propertyName: 'kind', details: [] }] }] } }
  }, 'Refused', { kind: 'z', qty: 1 })
  t.equal(mongo?.message, 'Refused is invalid: kind must be one of a, b', 'MongoDB document validation')
  t.equal(constraintViolation({ code: '23505' }, 'Refused', {}), undefined, 'a duplicate is not a validation failure')
  t.match(constraintViolation({ code: '23514', table: 'Other', constraint: 'Other_x_check' }, 'Other', {}), { code: 142, message: /Other_x_check/ }, 'a CHECK of a class no model declares: 142 naming it')
  t.match(constraintViolation({ code: '23514', table: 'Other', constraint: 'dba_positive_total' }, 'Other', {}), { code: 142, message: /CHECK constraint dba_positive_total/ }, 'a CHECK a DBA made: 142 naming it')
})

t.test('the schema plan: fields, permissions, what is destructive, the exit code', async (t) => {
  const definitions: ParseClassSchema[] = [
    { className: 'Mig', fields: { name: { type: 'String' }, qty: { type: 'Number' }, owner: { type: 'Pointer', targetClass: '_User' } }, classLevelPermissions: { find: { '*': true }, delete: {} } },
    { className: 'Fresh', fields: { title: { type: 'String' } } },
    { className: '_Role', classLevelPermissions: { find: { '*': true } } }
  ]
  const stored: StoredClass[] = [
    { className: 'Mig', fields: { objectId: { type: 'String' }, name: { type: 'String' }, qty: { type: 'String' }, owner: { type: 'Pointer', targetClass: 'Team' }, old: { type: 'Boolean' } }, classLevelPermissions: { find: { '*': true }, delete: { '*': true } } },
    { className: '_Role', fields: {}, classLevelPermissions: { find: { '*': true } } }
  ]
  const changes = diffSchema(definitions, stored)
  t.same(changes.map((c) => [c.className, c.detail, c.destructive]), [
    ['Mig', 'field type changed: qty String → Number (the boot fails until recreateModifiedFields: true or the field is renamed)', true],
    ['Mig', 'field type changed: owner Pointer<Team> → Pointer<_User> (the boot fails until recreateModifiedFields: true or the field is renamed)', true],
    ['Mig', 'class-level permission delete: {"*":true} → {}', false],
    ['Fresh', 'class created with title (String)', false]
  ], 'an undeclared stored field stays without deleteExtraFields')
  const dropping = diffSchema(definitions, stored, { deleteExtraFields: true, recreateModifiedFields: true })
  t.ok(dropping.some((c) => c.detail === 'field dropped: old (Boolean), its values lost' && c.destructive), 'deleteExtraFields drops it')
  t.ok(dropping.some((c) => /qty String → Number \(dropped and recreated, its values lost\)/.test(c.detail)), 'recreateModifiedFields recreates')
  t.equal(planExitCode([]), 0)
  t.equal(planExitCode(changes.filter((c) => !c.destructive)), 1)
  t.equal(planExitCode(changes), 2)
  t.equal(formatPlan([]), 'No changes: the database matches the declarations.\n')
  t.equal(formatPlan(changes.slice(2)), [
    '  Mig: class-level permission delete: {"*":true} → {}',
    '  Fresh: class created with title (String)',
    '',
    '2 changes at the next boot.',
    ''
  ].join('\n'))
})
