// Names past PostgreSQL's 63 bytes, and the edges of CHECK constraints, over
// three boots of one unchanged model on the same database: the kit finds its
// own (shortened) names again, and those an older kit left cut short, so
// nothing is dropped or re-made and the plan is empty; every CHECK violation answers 142 naming the constraint; a JavaScript
// pattern means the same in the database; a version field added to a class
// with rows leaves the old rows updatable.
import t from 'tap'
import path from 'node:path'
import { rmSync } from 'node:fs'
import Parse from 'parse/node'
import { BaseModel, ParseClass, ParseField, ParseVersionField } from '../lib/index.js'
import { currentDatabase } from '../lib/storage/database.js'
import { planSchemaChanges } from '../lib/storage/schema-plan.js'
import { postgresRegex } from '../lib/model/postgres-regex.js'
import { pgIdentifier } from '../lib/storage/postgres/identifiers.js'
import { appHeaders, lane, masterHeaders, startKit, tempDir, type Kit } from './helpers/kit.js'

@ParseClass('CustomerSubscription', {
  compoundIndexes: [{ fields: ['billingPeriodStart', 'billingPeriodEnd', 'status'], unique: true }]
})
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- declared for its decorators only
class CustomerSubscription extends BaseModel {
  @ParseField({ type: 'String' }) declare billingPeriodStart: string
  @ParseField({ type: 'String' }) declare billingPeriodEnd: string
  @ParseField({ type: 'String' }) declare status: string
  @ParseField({ type: 'String', unique: true }) declare externalReferenceFromTheBillingProvider: string
  @ParseField({ type: 'Number', index: -1 }) declare lastInvoiceAmountInSmallestCurrencyUnit: number
  @ParseField({ type: 'Number', min: 0 }) declare outstandingBalanceInSmallestCurrencyUnit: number
  @ParseField({ type: 'String', pattern: /\bcat\b/ }) declare phrase: string
}

// Without a version field at the first boot; with one from the second on.
function declareLedger (versioned: boolean) {
  if (!versioned) {
    @ParseClass('Ledger')
    class Ledger extends BaseModel {
      @ParseField({ type: 'Number' }) declare amount: number
    }
    return Ledger
  }
  @ParseClass('Ledger')
  class Ledger extends BaseModel {
    @ParseField({ type: 'Number' }) declare amount: number
    @ParseVersionField() declare version: number
  }
  return Ledger
}

const LONG_INDEX = 'CustomerSubscription_billingPeriodStart_1_billingPeriodEnd_1_status_1'
const LONG_UNIQUE = 'CustomerSubscription_unique_externalReferenceFromTheBillingProvider'
const LONG_CHECK = 'CustomerSubscription_outstandingBalanceInSmallestCurrencyUnit_check'

interface Pg { any (query: string, values?: unknown): Promise<Array<Record<string, any>>> }
const pg = () => (currentDatabase()!.adapter as unknown as { _client: Pg })._client

/** Every index and constraint of the table, by name, with its oid: a drop and re-make changes the oid. */
async function catalogue (): Promise<Record<string, string>> {
  const indexes = await pg().any(`SELECT i.relname AS name, i.oid::text AS oid, pg_get_indexdef(i.oid) AS def FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class r ON r.oid = x.indrelid WHERE r.relname = 'CustomerSubscription'`)
  const checks = await pg().any(`SELECT c.conname AS name, c.oid::text AS oid, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
    JOIN pg_class r ON r.oid = c.conrelid WHERE r.relname = 'CustomerSubscription' AND c.contype = 'c'`)
  return Object.fromEntries([...indexes, ...checks].map((row) => [row.name as string, `${row.oid as string} ${row.def as string}`]))
}

const save = (kit: Kit, body: Record<string, unknown>) => kit.request('POST', '/parse/classes/CustomerSubscription', { headers: masterHeaders, body })
const period = { billingPeriodStart: '2026-11', billingPeriodEnd: '2026-12', status: 'active' }

t.test('an unsupported pattern construct fails at import, naming the field and the construct', async (t) => {
  class Probe extends BaseModel {}
  const declare = () => ParseField({ type: 'String', pattern: /^(\w)\1$/ })(Probe.prototype, 'doubled')
  t.throws(declare, { code: 'FPK_ERR_FIELD_PATTERN_UNSUPPORTED', message: /@ParseField Probe\.doubled: option "pattern" .* uses a backreference \(\\1\)/ })
  t.throws(() => ParseField({ type: 'String', pattern: /a/s })(Probe.prototype, 'dotAll'), { code: 'FPK_ERR_FIELD_PATTERN_UNSUPPORTED', message: /the s flag/ })
})

t.test('three boots of an unchanged model with names past 63 bytes', { skip: lane.kind === 'postgres' ? false : 'PostgreSQL identifiers and CHECK constraints' }, async (t) => {
  const dir = tempDir()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const same = { dataDir: path.join(dir, 'postgres'), allowedRoutes: [{ path: '/classes/*' }] }
  const boot = async (versioned: boolean) => {
    declareLedger(versioned)
    const kit = await startKit(t, same)
    await kit.app.kit.indexesApplied
    return kit
  }

  // Boot 1: the rows, the DBA's CHECK, a kit-style CHECK on a class no model declares, a row without a version.
  const first = await boot(false)
  t.equal((await save(first, { ...period, externalReferenceFromTheBillingProvider: 'ext-1' })).status, 201)
  t.equal((await save(first, period)).json?.code, Parse.Error.DUPLICATE_VALUE, 'boot 1: the 3-field unique index holds')
  await pg().any('ALTER TABLE "CustomerSubscription" ADD CONSTRAINT "dba_status_is_not_bogus" CHECK (status <> \'bogus\')')
  t.equal((await first.request('POST', '/parse/classes/Gone', { headers: masterHeaders, body: { qty: 1 } })).status, 201)
  await pg().any('ALTER TABLE "Gone" ADD CONSTRAINT "Gone_qty_check" CHECK (qty >= 0)')
  const ledger = await first.request('POST', '/parse/classes/Ledger', { headers: appHeaders, body: { amount: 1 } })
  t.equal(ledger.status, 201, ledger.text)
  const afterFirst = await catalogue()
  // As an older kit left them: PostgreSQL had cut the long names at 63 bytes. Boot 2 takes them back by renaming.
  for (const declared of [LONG_INDEX, LONG_UNIQUE]) await pg().any('ALTER INDEX $1:name RENAME TO $2:name', [pgIdentifier(declared), declared.slice(0, 63)])
  await pg().any('ALTER TABLE "CustomerSubscription" RENAME CONSTRAINT $1:name TO $2:name', [pgIdentifier(LONG_CHECK), LONG_CHECK.slice(0, 63)])
  await first.app.close()

  const second = await boot(true)
  const afterSecond = await catalogue()
  const planned = await planSchemaChanges(currentDatabase()!)
  const duplicateAfterSecond = await save(second, period)
  await second.app.close()
  const third = await boot(true)
  const afterThird = await catalogue()

  t.test('the kit\'s names fit 63 bytes, and nothing was dropped or re-made', async (t) => {
    const names = Object.keys(afterThird)
    t.ok(names.every((name) => Buffer.byteLength(name) <= 63), names.join(', '))
    const index = names.find((name) => name.startsWith(LONG_INDEX.slice(0, 40)))
    t.match(afterThird[index!], /UNIQUE INDEX .* \("billingPeriodStart", "billingPeriodEnd", status\)/, 'the 3-field unique index')
    t.ok(names.some((name) => name.startsWith('CustomerSubscription_unique_externalRef')), 'the unique field index')
    t.ok(names.some((name) => name.startsWith('CustomerSubscription_lastInvoiceAmount')), 'the ordered index')
    t.ok(names.some((name) => name.startsWith(LONG_CHECK.slice(0, 40))), 'the CHECK with a long field name')
    t.same(afterSecond, afterFirst, 'boot 2 renamed what an older kit left under cut-short names, and rebuilt nothing')
    t.same(afterThird, afterSecond, 'boot 3 changed nothing')
  })

  t.test('the plan of the unchanged model is empty after boots 2 and 3', async (t) => {
    const ours = (changes: Awaited<ReturnType<typeof planSchemaChanges>>) => changes.filter((change) => change.subject === 'index' || change.subject === 'constraint')
    t.same(ours(planned), [], 'after boot 2')
    t.same(ours(await planSchemaChanges(currentDatabase()!)), [], 'after boot 3')
  })

  t.test('duplicates are refused at every boot', async (t) => {
    t.equal(duplicateAfterSecond.json?.code, Parse.Error.DUPLICATE_VALUE, 'after boot 2')
    t.equal((await save(third, period)).json?.code, Parse.Error.DUPLICATE_VALUE, 'after boot 3')
    t.equal((await save(third, { externalReferenceFromTheBillingProvider: 'ext-1' })).json?.code, Parse.Error.DUPLICATE_VALUE, 'the unique field')
  })

  t.test('every broken CHECK answers 142 naming it', async (t) => {
    const long = await save(third, { outstandingBalanceInSmallestCurrencyUnit: -1 })
    t.equal(long.status, 400, long.text)
    t.same(long.json, { code: 142, error: 'CustomerSubscription is invalid: outstandingBalanceInSmallestCurrencyUnit must be at least 0' })
    const dba = await save(third, { status: 'bogus' })
    t.equal(dba.status, 400, dba.text)
    t.same(dba.json, { code: 142, error: 'CustomerSubscription is invalid: the row breaks the database\'s CHECK constraint dba_status_is_not_bogus' })
    const gone = await third.request('POST', '/parse/classes/Gone', { headers: masterHeaders, body: { qty: -1 } })
    t.equal(gone.status, 400, gone.text)
    t.same(gone.json, { code: 142, error: 'Gone is invalid: qty breaks a rule the database still holds (Gone_qty_check)' })
  })

  t.test('pattern /\\bcat\\b/ means a word boundary in the database too', async (t) => {
    t.equal((await save(third, { phrase: 'cat' })).status, 201, '"cat" is accepted')
    const concat = await save(third, { phrase: 'concat' })
    t.same(concat.json, { code: 142, error: 'CustomerSubscription is invalid: phrase must match /\\bcat\\b/' }, '"concat" is refused')
  })

  t.test('translated patterns accept in PostgreSQL exactly what they accept in JavaScript', async (t) => {
    const patterns = [/\bcat\b/, /\Bat\b.*/, /\d+x?/, /\w+@\w+/, /a.b/, /[\b\d]x/, /\x41B/, /^[a-z]+$/i, /[\w.-]+/, /caf\u00e9/, /[[:alpha:]]+/, /\D\W\s\S/, /(?:ab|cd)+?/, '[A-Z]{2}-\\d{1,3}']
    const inputs = ['cat', 'concat', 'at', 'bat', '123', '12x', 'a@b', 'ab', 'a\nb', 'axb', 'AB', 'Ab', 'a]', 'café', '\bx', '5x', '٣x', 'me@host', 'a.b-c', 'x! y', 'abcd', 'AB-12', 'ab-1']
    for (const pattern of patterns) {
      const { source, caseInsensitive } = postgresRegex(pattern)
      const js = new RegExp(`^(?:${typeof pattern === 'string' ? pattern : pattern.source})$`, typeof pattern === 'string' ? '' : pattern.flags)
      for (const input of inputs) {
        const [{ matches }] = await pg().any(`SELECT $1 ${caseInsensitive ? '~*' : '~'} $2 AS matches`, [input, source])
        t.equal(matches, js.test(input), `${String(pattern)} on ${JSON.stringify(input)} (PostgreSQL: ${source})`)
      }
    }
  })

  t.test('a row saved before the version field was added is updatable', async (t) => {
    const id = ledger.json.objectId as string
    const rest = await third.request('PUT', `/parse/classes/Ledger/${id}`, { headers: appHeaders, body: { amount: 2 } })
    t.equal(rest.status, 200, rest.text)
    const stored = await third.request('GET', `/parse/classes/Ledger/${id}`, { headers: appHeaders })
    t.match(stored.json, { amount: 2, version: 1 }, 'it has a version from now on')
    const stale = await third.request('PUT', `/parse/classes/Ledger/${id}`, { headers: appHeaders, body: { amount: 3 } })
    t.equal(stale.status, 400, 'and is then checked like any other row')

    // Through the SDK: another row without a version (saved before the field), fetched and saved.
    await pg().any('UPDATE "Ledger" SET version = NULL WHERE "objectId" = $1', [id])
    const fetched = await new Parse.Query('Ledger').get(id)
    fetched.set('amount', 4)
    await fetched.save()
    t.match((await third.request('GET', `/parse/classes/Ledger/${id}`, { headers: appHeaders })).json, { amount: 4, version: 1 })
  })
})
