// How declared triggers reach Parse.Cloud, and the boot errors for wrong declarations.
import t from 'tap'
import { BaseModel, ParseClass, ParseField, BeforeSave, AfterSave, BeforeLogin, BeforeSaveFile, BeforeSubscribe, AfterConfigSave } from '../lib/index.js'
import { registerTriggers } from '../lib/triggers/register.js'
import { declaredTriggers } from '../lib/triggers/decorators.js'

@ParseClass('Ticket')
class Ticket extends BaseModel {
  @ParseField({ type: 'String' }) declare code: string
  @BeforeSave() static check () {}
  @AfterSave({ requireUser: true }) static audit () {}
  @BeforeLogin() static gate () {}
  @BeforeSaveFile() static scan () {}
  @BeforeSubscribe() static subscribe () {}
  @AfterConfigSave() static configChanged () {}
}

const declaredOn = (model: { name: string }) => declaredTriggers().filter((declaration) => (declaration.target as { name: string }).name === model.name)

function recorder () {
  const calls: Array<{ hook: string, args: unknown[] }> = []
  const cloud = new Proxy({}, { get: (_target, hook: string) => (...args: unknown[]) => { calls.push({ hook, args }) } })
  return { calls, cloud: cloud as Record<string, (...args: unknown[]) => unknown> }
}

t.test('each kind registers with the right Parse.Cloud hook and scope', async (t) => {
  const { calls, cloud } = recorder()
  registerTriggers(cloud, declaredOn(Ticket))
  const summary = calls.map(({ hook, args }) => [hook, typeof args[0] === 'string' ? args[0] : '(global)', args.length])
  t.same(summary, [
    ['beforeSave', 'Ticket', 2],
    ['afterSave', 'Ticket', 3],
    ['beforeLogin', '(global)', 1],
    ['beforeSave', '@File', 2],
    ['beforeSubscribe', 'Ticket', 2],
    ['afterSave', '@Config', 2]
  ])
  t.same(calls[1].args[2], { requireUser: true }, 'the validator is passed through')
})

t.test('a trigger twice for one class and type fails at import with both places named', async (t) => {
  t.throws(() => {
    @ParseClass('Dup')
    class Dup extends BaseModel {
      @BeforeSave() static first () {}
      @BeforeSave() static second () {}
    }
    return Dup
  }, { code: 'FPK_ERR_MODEL_DECLARATION', message: '@BeforeSave on Dup.second: Dup.first is already its @BeforeSave; Parse runs one per class, so do both steps in one method' })
  // One global trigger (beforeLogin) declared on two classes: refused at boot, with its code.
  @ParseClass('LoginA') class LoginA extends BaseModel { @BeforeLogin() static gate () {} }
  @ParseClass('LoginB') class LoginB extends BaseModel { @BeforeLogin() static gate () {} }
  t.throws(() => registerTriggers(recorder().cloud, [...declaredOn(LoginA), ...declaredOn(LoginB)]),
    { code: 'FPK_ERR_MODEL_DECLARATION', message: /^@BeforeLogin is declared twice \(LoginA\.gate and LoginB\.gate\)/ })
})

t.test('a trigger on a class without @ParseClass fails at boot with what to change', async (t) => {
  class Loose {
    @BeforeSave() static check () {}
  }
  t.throws(() => registerTriggers(recorder().cloud, declaredOn(Loose)), /@BeforeSave on Loose\.check: Loose is not a model\. Add @ParseClass\('<ClassName>'\)/)
})

t.test('triggers must be static methods', async (t) => {
  t.throws(() => {
    class Instance extends BaseModel {
      @BeforeSave() check () {}
    }
    return Instance
  }, /@BeforeSave on Instance\.check: triggers must be static methods/)
})
