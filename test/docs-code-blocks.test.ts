// Docs that cannot drift: every ```ts block of README.md and docs/**/*.md is
// compiled, in one TypeScript program, against the package's own types
// ('fastify-parse-kit' → lib/index.ts, 'fastify-parse-kit/plugin' → plugin.ts);
// a ```ts fragment block is an excerpt and is skipped. Every relative link
// between the pages must reach a file, and an anchor a heading of it.
// The same program compiles the handler typing cases and the code a new project
// starts from (test/helpers/handler-types.ts, formerly test/handler-types.test.ts):
// one process loading TypeScript and parsing the kit instead of two.
import t from 'tap'
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { compileSnippets } from './helpers/compile-snippets.js'
import { HANDLER_SNIPPETS, handlerSnippets, testHandlerTypes } from './helpers/handler-types.js'
import { type CodeBlock, headingAnchors, markdownFiles, parseMarkdown, readPage, relativeLinks } from './helpers/markdown.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

const pages = markdownFiles(root).map((file) => ({ file, text: readPage(root, file), ...parseMarkdown(file, readPage(root, file)) }))

const isTypeScript = (block: CodeBlock): boolean => ['ts', 'typescript'].includes(block.info[0] ?? '')
const isFragment = (block: CodeBlock): boolean => block.info.includes('fragment')

t.test('the extractor reads fences and links as GitHub renders them', async (t) => {
  const page = [
    'Text with ```` ```ts ```` inline, not a fence, and [a link](other.md#part "title").',
    '````ts fragment',
    'const a = 1',
    '```',
    '[not a link](inside.md)',
    '```',
    '````',
    '## The `npm start` app (example)',
    '## The `npm start` app (example)',
    '[web](https://fastify.dev) and `[code](nope.md)` and [anchor](#top)'
  ].join('\n')
  const { blocks, prose } = parseMarkdown('page.md', page)
  t.same(blocks.map((block) => [block.line, block.info, block.code]), [[3, ['ts', 'fragment'], 'const a = 1\n```\n[not a link](inside.md)\n```']])
  t.same(relativeLinks('page.md', prose).map((link) => link.target), ['other.md#part', '#top'])
  t.same([...headingAnchors(page)], ['the-npm-start-app-example', 'the-npm-start-app-example-1'])
})

// Deliberately broken blocks compiled in the same program as the real ones: proof that the check can fail.
const BROKEN_FILE = 'docs/(deliberately-broken).md'
const broken = (line: number, code: string): CodeBlock => ({ file: BROKEN_FILE, line, info: ['ts'], code })
const docBlocks = pages.flatMap((page) => page.blocks).filter(isTypeScript)
const compiledBlocks = docBlocks.filter((block) => !isFragment(block))
// A ```ts browser block is a page's code: compiled as a bundler resolves 'parse' (the SDK's browser entry).
const isBrowser = (block: CodeBlock): boolean => block.info.includes('browser')
const handlers = await handlerSnippets()
const errors = compileSnippets([
  broken(10, "import { kitPlugin } from 'fastify-parse-kit'\nconst port: number = kitPlugin\nconsole.log(port)"),
  broken(20, "import { kitPlugin } from 'fastify-parse-kit/plugin'\nimport { configureKit } from 'fastify-parse-kit'\nconfigureKit({ mountPth: '/api' })\nconsole.log(kitPlugin)"),
  broken(30, "import { kitPlugin } from 'fastify-parse-kit'\nconsole.log(kitPlugin)"),
  ...handlers,
  ...compiledBlocks.filter((block) => !isBrowser(block))
]).concat(compileSnippets(compiledBlocks.filter(isBrowser), { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler }))
const handlerErrors = errors.filter((error) => error.where.startsWith(HANDLER_SNIPPETS))
const brokenErrors = errors.filter((error) => error.where.startsWith(BROKEN_FILE))
const docErrors = errors.filter((error) => !error.where.startsWith(BROKEN_FILE) && !error.where.startsWith(HANDLER_SNIPPETS))

t.test('a broken example fails: the check sees the package\'s real types', async (t) => {
  t.equal(brokenErrors.length, 2, brokenErrors.map((error) => `${error.where} ${error.message}`).join('\n'))
  t.match(brokenErrors[0], { where: `${BROKEN_FILE}:11`, message: /TS2322/ }, 'a wrong type, located on its Markdown line')
  t.match(brokenErrors[1], { where: `${BROKEN_FILE}:22`, message: /mountPth/ }, 'a misspelt option of the real configureKit')
})

t.test('every ```ts block of the README and docs/ compiles', async (t) => {
  t.ok(compiledBlocks.length >= 10, `${compiledBlocks.length} blocks compiled, ${docBlocks.length - compiledBlocks.length} fragments skipped`)
  t.same(docErrors.map((error) => `${error.where} ${error.message}`), [],
    'a block that is an excerpt on purpose is marked ```ts fragment; every other one must compile')
})

t.test('relative links between the pages resolve', async (t) => {
  const missing: string[] = []
  let checked = 0
  for (const page of pages) {
    for (const link of relativeLinks(page.file, page.prose)) {
      checked++
      const [target, anchor] = link.target.split('#')
      const file = target === '' ? page.file : path.posix.join(path.posix.dirname(page.file), target)
      const where = `${link.file}:${link.line} → ${link.target}`
      if (!existsSync(path.join(root, file))) { missing.push(`${where}: no file ${file}`); continue }
      if (anchor === undefined || !file.endsWith('.md') || statSync(path.join(root, file)).isDirectory()) continue
      if (!headingAnchors(readPage(root, file)).has(anchor)) missing.push(`${where}: no heading #${anchor} in ${file}`)
    }
  }
  t.ok(checked > 50, `${checked} links checked`)
  t.same(missing, [], 'every relative link reaches a page (and its heading)')
})

t.test('handlers typed against their declarations', async (t) => {
  testHandlerTypes(t, handlers, handlerErrors)
})
