// Parse's requestKeywordDenylist scan and the kit's (lib/parse/keyword-scan.ts),
// side by side on the same inputs: every answer and every error must be the same.
// Pure: no server, no database. A running kit installs it: parse-contract.test.ts.
import t from 'tap'
import { parseInternals } from '../lib/parse/internals.js'
import { installKeywordScan, installedScan, objectContainsKeyValue, parseObjectContainsKeyValue } from '../lib/parse/keyword-scan.js'
// Parse Server's deep modules (lib/parse/internals.ts loads them at the first call).
const { ParseUtils } = parseInternals()

type Outcome = { answer: boolean } | { threw: string }

function outcome (scan: typeof objectContainsKeyValue, object: unknown, key: unknown, value: unknown): Outcome {
  try {
    return { answer: scan(object, key, value) }
  } catch (error) {
    return { threw: `${(error as Error).name}: ${(error as Error).message}` }
  }
}

// Parse's default denylist, the shapes its option documents (key, value, pair; strings as patterns,
// numbers, booleans), patterns with meaning in a regular expression, and bad ones.
const keywords: Array<{ key?: unknown, value?: unknown }> = [
  { key: '_bsontype', value: 'Code' }, { key: 'constructor' }, { key: '__proto__' },
  { value: 'Code' }, { value: 42 }, { value: true }, { value: false }, { key: '^\\$' }, { key: 'a.b' }, { key: '' },
  { key: '^ti' }, { value: '^(?:evil|bad)$' }, { key: 'x', value: 0 }, { key: '(' }, { value: '[' }, { key: '*' },
  { key: /TITLE/i }, { value: /co/g }, { key: 5 }, { value: null }, {}
]

const cyclic: Record<string, unknown> = { title: 'loop' }
cyclic.self = cyclic
cyclic.list = [cyclic, { deeper: cyclic }]
const shared = { constructor: 'shared' }
const tagged = { [Symbol.toStringTag]: 'Array', hidden: { _bsontype: 'Code' } } // walked or not by its tag, as Parse decides

const objects: unknown[] = [
  {}, [], { title: 'hello', body: 'world', views: 0 },
  { title: 'Code' }, { _bsontype: 'Code' }, { nested: { deep: [{ _bsontype: 'Code' }] } },
  { constructor: { prototype: { polluted: true } } }, JSON.parse('{"__proto__":{"polluted":true}}'),
  { $where: 'x' }, { a: { b: { c: { d: 42 } } } }, { 'a.b': 1 }, { list: [1, 2, 'Code', true, null] },
  { ACL: { '*': { read: true } }, owner: { __type: 'Pointer', className: '_User', objectId: 'u1' } },
  { when: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' }, tags: ['evil', 'bad'] },
  { x: 0 }, { x: '0' }, { flag: false }, { nothing: null, missing: undefined }, { emoji: 'Ünïcode ✓' },
  cyclic, { one: shared, two: shared }, tagged, { date: new Date(0), map: new Map([['_bsontype', 'Code']]) },
  [{ TITLE: 1 }, 'Code', { co: 'co' }], { title: 'x', views: 42 }, { k: 'coco' }, { '': '' }
]

t.test('the same answer or the same error as Parse, for every keyword shape and object', async (t) => {
  let compared = 0
  for (const keyword of keywords) {
    for (const object of objects) {
      const label = `${JSON.stringify(String(keyword.key))}=${JSON.stringify(String(keyword.value))} in ${t.name}#${compared}`
      t.same(outcome(objectContainsKeyValue, object, keyword.key, keyword.value), outcome(parseObjectContainsKeyValue, object, keyword.key, keyword.value), label)
      compared++
    }
  }
  t.ok(compared >= 500, `${compared} cases compared`)
  // A pattern compiled once keeps answering the same, whatever it met before.
  for (const round of [1, 2, 3]) t.same(outcome(objectContainsKeyValue, { text: 'abc' }, undefined, 'b'), { answer: true }, `round ${round}: a cached pattern answers alike`)
})

t.test('a regular expression with state (g) is compiled afresh each time, as Parse does', async (t) => {
  const sticky = /co/g
  const answers = [1, 2, 3, 4].map(() => objectContainsKeyValue({ k: 'co' }, undefined, sticky))
  const parse = [1, 2, 3, 4].map(() => parseObjectContainsKeyValue({ k: 'co' }, undefined, sticky))
  t.same(answers, parse, 'a repeated scan answers as Parse\'s')
  t.same(answers, [true, true, true, true], 'the scan never inherits a lastIndex')
})

t.test('bad input: the errors are Parse\'s', async (t) => {
  for (const root of [null, undefined, 'text', 5]) {
    t.same(outcome(objectContainsKeyValue, root, 'constructor', undefined), outcome(parseObjectContainsKeyValue, root, 'constructor', undefined), `root ${String(root)}`)
  }
  t.match(outcome(objectContainsKeyValue, { a: 1 }, '(', undefined), { threw: /^SyntaxError: / }, 'a bad pattern throws SyntaxError when a key meets it')
  t.same(outcome(objectContainsKeyValue, {}, '(', undefined), { answer: false }, 'and not when nothing meets it')
})

t.test('installed, Parse\'s checkProhibitedKeywords answers through it, with Parse\'s message', async (t) => {
  installKeywordScan()
  installKeywordScan()
  t.equal(ParseUtils.objectContainsKeyValue, installedScan, 'Utils.objectContainsKeyValue is the kit\'s (installing twice changes nothing)')
  const config = { requestKeywordDenylist: [{ key: '_bsontype', value: 'Code' }, { key: 'constructor' }, { key: '__proto__' }] }
  let thrown: unknown
  try { ParseUtils.checkProhibitedKeywords(config, { nested: [{ _bsontype: 'Code' }] }) } catch (error) { thrown = error }
  t.equal(thrown, 'Prohibited keyword in request data: {"key":"_bsontype","value":"Code"}.', 'a nested denied pair is refused with Parse\'s message')
  t.doesNotThrow(() => ParseUtils.checkProhibitedKeywords(config, { title: 'constructor', body: { kind: 'Code' } }), 'values named like keys pass')
})
