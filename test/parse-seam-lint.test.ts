// The lint rule that keeps Parse's private surface behind lib/parse/
// (eslint.config.js): a private read outside that folder is refused by name;
// the same code inside it passes. Runs ESLint's own Node API on sample text.
import t from 'tap'
import path from 'node:path'
import { ESLint } from 'eslint'

const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), '..')
const SAMPLE = `export function sample (adapter: { _client: { one (q: string): unknown }, $pool?: unknown }, body: Record<string, unknown>): unknown[] {
  return [adapter._client.one('SELECT 1'), adapter.$pool, body['_method']]
}
`
const eslint = new ESLint({ cwd: ROOT })

async function privateReads (file: string): Promise<string[]> {
  const [result] = await eslint.lintText(SAMPLE, { filePath: path.join(ROOT, file) })
  t.equal(result.fatalErrorCount, 0, `${file} parses`)
  return result.messages.filter((message) => message.ruleId === 'no-restricted-syntax').map((message) => `${message.line}:${message.column} ${message.message}`)
}

t.test('outside lib/parse/: every underscore or $ member read is refused, naming the seam', async (t) => {
  for (const file of ['lib/storage/postgres/sample.ts', 'lib/host/sample.ts', 'plugin.ts', 'cli/sample.ts']) {
    const refused = await privateReads(file)
    t.equal(refused.length, 3, `${file}: _client, $pool and ['_method'] each refused`)
    for (const line of refused) t.match(line, /private member .* lib\/parse\/ .*parse-seam\.md/)
  }
})

t.test('inside lib/parse/ the same reads pass: that is where they belong', async (t) => {
  t.same(await privateReads('lib/parse/sample.ts'), [])
})

// The library as it stands passing the rule is `npm run lint`'s job (part of `npm test`, same config):
// linting all of lib/ again here cost a minute on a loaded machine.
