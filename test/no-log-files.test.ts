// Importing the library writes nothing to disk: Parse's file logger stays off.
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { tempDir } from './helpers/kit.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

t.test('importing the library creates no ./logs/ and no log files', async (t) => {
  const cwd = tempDir('fpk-logs-')
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }))
  const env = { ...process.env }
  delete env.TESTING
  delete env.PARSE_SERVER_LOGS_FOLDER
  const entry = pathToFileURL(path.join(root, 'lib/index.ts')).href
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--import', import.meta.resolve('tsx/esm'), '--input-type=module',
    '-e', `const kit = await import(${JSON.stringify(entry)}); console.log(typeof kit.kitPlugin)`
  ], { cwd, env })
  t.equal(stdout.trim(), 'function', 'the library loaded')
  t.notOk(existsSync(path.join(cwd, 'logs')), 'no ./logs/')
  t.notOk(existsSync(path.join(cwd, 'test_logs')), 'no ./test_logs/')
  t.same(readdirSync(cwd), [], 'nothing written in the working directory')
})
