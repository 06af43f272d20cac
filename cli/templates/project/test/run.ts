// `npm test`: every test/*.test.ts (or the files named: `npm test -- test/tags.test.ts`)
// in this one process, each file a suite of its own, one after the other, so that
// they share one boot of the app (test/harness.ts) instead of one each.
import path from 'node:path'
import { readdirSync } from 'node:fs'
import { describe } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { shareOneBoot } from './harness.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const named = process.argv.slice(2)
const files = named.length > 0 ? named.map((file) => path.resolve(file)) : readdirSync(here).filter((file) => file.endsWith('.test.ts')).sort().map((file) => path.join(here, file))
shareOneBoot()
for (const file of files) describe(path.relative(process.cwd(), file), async () => { await import(pathToFileURL(file).href) })
