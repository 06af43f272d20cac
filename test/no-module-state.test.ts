// Runtime state lives on the kit (lib/kit-state.ts), not in module variables:
// a module-level `let`, or an empty Map/Set/array filled at run time, in lib/
// or plugin.ts fails here unless it is one of the listed declaration
// registries (class metadata filled when decorators run at import) or memos
// keyed by a kit's own objects.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')

const ALLOWED = new Map<string, string>([
  ['lib/kit-state.ts: let active', 'the one process-level slot: the running kit\'s state'],
  ['lib/model/registry.ts: const pending', 'declaration registry (@ParseField)'],
  ['lib/model/registry.ts: const byClass', 'declaration registry (@ParseClass)'],
  ['lib/model/registry.ts: const byName', 'declaration registry (@ParseClass)'],
  ['lib/model/registry.ts: let revision', 'declaration registry revision'],
  ['lib/routing/registry.ts: const declarations', 'declaration registry (@CloudFunction)'],
  ['lib/routing/registry.ts: const prefixes', 'declaration registry (@Route)'],
  ['lib/routing/registry.ts: let revision', 'declaration registry revision'],
  ['lib/triggers/decorators.ts: const declarations', 'declaration registry (trigger decorators)'],
  ['lib/jobs/registry.ts: const declarations', 'declaration registry (@Job, @Cron)'],
  ['lib/storage/transaction.ts: const declaredIn', 'declaration registry (@Transactional: the file of each)'],
  ['lib/forget-declarations.ts: const forgotten', 'declarations taken out of their registries, kept to put back when their file is imported again'],
  ['lib/access/credentials.ts: const compiled', 'memo keyed by a kit\'s masterKeyIps list'],
  ['lib/access/credentials.ts: const ruleDigests', 'memo keyed by a kit\'s master key rule'],
  ['lib/storage/page-cursor.ts: let derived', 'memo of the cursor signing key, one entry, keyed by the master key it is derived from'],
  ['lib/storage/postgres/relocation.ts: const stoppedCopies', 'ephemeral database copies this process removes when it exits: process-wide by nature'],
  ['lib/parse/keyword-scan.ts: const compiled', 'memo of a pure function (a denylist pattern → its RegExp), bounded'],
  ['lib/parse/parse-main.ts: let parseServer', 'Parse Server\'s package, required at its first use (a memo of what require.cache holds for the process)'],
  ['lib/parse/internals.ts: let internals', 'Parse Server\'s deep modules, required at their first use (a memo of what require.cache holds for the process)'],
  ['lib/parse/internals.ts: let sdkEncode', 'the Parse SDK\'s encoder, required at its first use (a memo of what require.cache holds)'],
  ['lib/parse/keyword-scan.ts: let shipped', 'Parse\'s own scan, taken before the kit replaces it on Parse\'s Utils for the process'],
  ['lib/parse/push-without-adapter.ts: let shipped', 'Parse\'s own getPushController, taken before the kit replaces it on Parse\'s Controllers for the process'],
  ['lib/parse/shared-loads.ts: let drops', 'a count of Parse\'s cache drops, from a patch of Parse\'s SubCache for the process (lib/parse/ cannot reach the kit\'s state); only compared for equality']
])

function sources (dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return sources(relative)
    return entry.name.endsWith('.ts') ? [relative] : []
  })
}

/** Top-level declarations that hold state: `let`/`var`, or a const bound to an empty container. */
const STATEFUL = /^(?:export )?(?:(let|var) ([A-Za-z_$][\w$]*)|(const) ([A-Za-z_$][\w$]*)\s*(?::.+?)?=\s*(?:new (?:Map|Set|WeakMap|WeakSet)\b[^(]*\(\)|\[\]))/

function statefulDeclarations (file: string): string[] {
  return readFileSync(path.join(root, file), 'utf8').split('\n').flatMap((line) => {
    const match = STATEFUL.exec(line)
    if (!match) return []
    const [kind, name] = match[1] ? [match[1], match[2]] : [match[3], match[4]]
    return [`${file}: ${kind} ${name}`]
  })
}

t.test('no module-level runtime state outside the allow-list', async (t) => {
  const found = ['plugin.ts', ...sources('lib')].flatMap(statefulDeclarations)
  t.same(found.filter((entry) => !ALLOWED.has(entry)), [], 'keep runtime state on the kit (lib/kit-state.ts statePart), or list a declaration registry here with why')
  t.same([...ALLOWED.keys()].filter((entry) => !found.includes(entry)), [], 'every allowed entry still exists (drop stale ones)')
})

t.test('the scan sees what it forbids', async (t) => {
  const hits = ['let cache = 0', 'export let x: number', 'const seen = new Map<string, number>()', 'const queue: Array<() => void> = []', 'var old = 1']
  for (const line of hits) t.ok(STATEFUL.test(line), line)
  const misses = ['const KNOWN = new Set([\'a\'])', 'const LIMIT = 8', '  let local = 0', 'const part = statePart(\'x\', () => ({}))']
  for (const line of misses) t.notOk(STATEFUL.test(line), line)
})
