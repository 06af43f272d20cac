// forgetDeclarations and reviveDeclarations (lib/forget-declarations.ts): what
// lets test files share a process (test/helpers/file-group.ts) with each file's
// kits serving its own declarations only.
import path from 'node:path'
import t from 'tap'
import Parse from 'parse/node'
import { Forgettable, ForgettableFunctions, Member } from './helpers/forgettable/declarations.js'
import { forgetDeclarations, reviveDeclarations } from '../lib/forget-declarations.js'
import { allModels } from '../lib/model/registry.js'
import { declaredFunctions } from '../lib/routing/registry.js'
import { declaredTriggers } from '../lib/triggers/decorators.js'
import { declaredJobs, jobName } from '../lib/jobs/registry.js'
import { transactionalDeclared } from '../lib/storage/transaction.js'
import { claimProcess } from '../lib/kit-state.js'
import { loadDeclarations } from '../lib/loader.js'
import { parseInternals } from '../lib/parse/internals.js'

const folder = path.join(import.meta.dirname, 'helpers', 'forgettable')
const file = path.join(folder, 'declarations.ts')

/** What the registries hold, by name. */
function declared () {
  return {
    models: allModels().map((model) => model.className),
    functions: declaredFunctions().map((fn) => `${fn.prefix ?? ''}/${fn.name}`),
    triggers: declaredTriggers().map((trigger) => `${trigger.kind} ${(trigger.target as { name: string }).name}`),
    jobs: declaredJobs().map(jobName),
    transactional: transactionalDeclared()
  }
}

const DECLARED = {
  models: ['Forgettable', '_User'],
  functions: ['forgettables/forgettableHello', 'forgettables/forgettableWrite'],
  triggers: ['BeforeSave Forgettable'],
  jobs: ['forgettableJob'],
  transactional: true
}
const NOTHING = { models: [], functions: [], triggers: [], jobs: [], transactional: false }

const decoded = (className: string) => Parse.Object.fromJSON({ className, objectId: 'x1' })

t.test('forgotten: every registry empty, the Parse class names the SDK\'s again', async (t) => {
  t.same(declared(), DECLARED, 'the helper declared one of each')
  t.ok(decoded('Forgettable') instanceof Forgettable, 'the SDK decodes Forgettable rows as the model')
  t.ok(decoded('_User') instanceof Member, 'and users as the _User model')
  forgetDeclarations()
  t.same(declared(), NOTHING)
  t.notOk(decoded('Forgettable') instanceof Forgettable, 'Forgettable rows decode as plain Parse objects')
  t.ok(decoded('_User') instanceof Parse.User, 'users decode as the SDK\'s Parse.User')
  t.notOk(decoded('_User') instanceof Member, '… not as the forgotten model')
  await import('./helpers/forgettable/declarations.js')
  t.same(declared(), NOTHING, 'importing the file again runs no decorator: a module runs once per process')
})

t.test('revived: the file\'s declarations back, once, in their order', async (t) => {
  reviveDeclarations(path.join(import.meta.dirname, 'helpers', 'other.ts'))
  t.same(declared(), NOTHING, 'another file\'s revival brings nothing')
  reviveDeclarations(file)
  t.same(declared(), DECLARED)
  t.ok(decoded('Forgettable') instanceof Forgettable)
  t.ok(decoded('_User') instanceof Member)
  t.equal(declaredFunctions().find((fn) => fn.name === 'forgettableHello')?.owner, ForgettableFunctions)
  reviveDeclarations(file)
  t.same(declared(), DECLARED, 'a second revival adds nothing')
})

t.test('the loader revives what it imports again', async (t) => {
  forgetDeclarations()
  await loadDeclarations([folder])
  t.same(declared(), DECLARED, 'a directory of declarations, imported before, serves its declarations again')
})

t.test('Parse\'s Cloud Code of the last server goes too', async (t) => {
  const { triggers } = parseInternals()
  triggers.addTrigger('beforeSave', 'Forgettable', () => {}, 'forgotten-app')
  t.ok(triggers.getTrigger('Forgettable', 'beforeSave', 'forgotten-app'), 'registered')
  forgetDeclarations()
  t.equal(triggers.getTrigger('Forgettable', 'beforeSave', 'forgotten-app'), undefined, 'gone: the next server registers its own')
  reviveDeclarations(file)
})

t.test('refused while a kit runs', async (t) => {
  const claim = claimProcess('running-app')
  t.teardown(() => claim.release())
  t.throws(() => forgetDeclarations(), /kit of app "running-app" still runs; close it first/)
  t.same(declared(), DECLARED, 'nothing forgotten')
})
