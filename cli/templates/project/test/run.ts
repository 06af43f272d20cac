// `npm test`: every test/*.test.ts (or the files named: `npm test -- test/tags.test.ts`)
// in this one process, so that they share one boot of the app (test/harness.ts)
// instead of one each; Node's test runner reports them together.
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const named = process.argv.slice(2)
const files = named.length > 0 ? named.map((file) => path.resolve(file)) : readdirSync(here).filter((file) => file.endsWith('.test.ts')).sort().map((file) => path.join(here, file))
for (const file of files) await import(pathToFileURL(file).href)
