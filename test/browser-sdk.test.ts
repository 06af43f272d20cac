// The browser page of docs/guides/browser-clients.md, as written there: the
// Parse JS SDK's browser build in headless Chromium, on an origin of its own,
// against the example application. Each `console.log` of the block must print
// what its trailing comment says, so the page cannot drift from the server.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseMarkdown } from './helpers/markdown.js'
import { APP_ID, masterHeaders, startKit } from './helpers/kit.js'
import { launchChromium, noChromium, serveStatic } from './helpers/browser.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const GUIDE = 'docs/guides/browser-clients.md'
const PAGE = '<!doctype html><html><head><script src="/parse.min.js"></script></head><body>page</body></html>'

/** The guide's one ```ts browser block. */
function browserBlock (): string {
  const blocks = parseMarkdown(GUIDE, readFileSync(path.join(root, GUIDE), 'utf8')).blocks.filter((block) => block.info.includes('browser'))
  if (blocks.length !== 1) throw new Error(`${GUIDE} should hold exactly one \`\`\`ts browser block, found ${blocks.length}`)
  return blocks[0].code
}

t.test('the browser snippet runs as written against the example app', { skip: noChromium() }, async (t) => {
  const code = browserBlock()
  const expected = code.split('\n').filter((line) => /^console\.log\(/.test(line)).map((line) => line.split('//')[1]?.trim())
  t.ok(expected.length >= 2 && expected.every(Boolean), 'every console.log of the block says what it prints')

  const kit = await startKit(t, {
    models: path.join(root, 'fixtures', 'models'),
    functions: path.join(root, 'fixtures', 'functions'),
    allowAuthRoutes: true
  })
  const demo = await kit.request('POST', '/parse/users', { headers: masterHeaders, body: { username: 'demo', password: 'demo-password' } })
  t.equal(demo.status, 201, 'the demo user of the snippet exists')

  // The block with the page's own values: the app id and the address the server listens on.
  t.match(code, "Parse.initialize('my-app', '')")
  t.match(code, "'http://localhost:1337/parse'")
  const body = code
    .replace(/^import Parse from 'parse'$/m, '')
    .replace("Parse.initialize('my-app', '')", `Parse.initialize(${JSON.stringify(APP_ID)}, '')`)
    .replace("'http://localhost:1337/parse'", JSON.stringify(`${kit.origin}/parse`))

  const parseBrowserBuild = readFileSync(createRequire(import.meta.url).resolve('parse/dist/parse.min.js'))
  const pageOrigin = await serveStatic(t, { '/': { type: 'text/html', body: PAGE }, '/parse.min.js': { type: 'text/javascript', body: parseBrowserBuild } })
  const browser = await launchChromium(t)
  const page = await browser.newPage()
  await page.goto(pageOrigin)
  const printed = await page.evaluate(`(async () => {
    const printed = []
    const console = { log: (...values) => printed.push(values.join(' ')) }
    ${body}
    return printed
  })()`)
  t.same(printed, expected, 'the page printed what the guide says it prints')
})
