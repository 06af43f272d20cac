// A handler typed against its @CloudFunction declaration: when they disagree,
// the compile error names the field (or the user) that does not match, in a
// few words, instead of printing the whole request type. And the code a
// project starts from (the Note files fpk new copies, what fpk g resource
// writes) types its requests, so that check applies to it. Compiled in
// docs-code-blocks.test.ts's program (one TypeScript program for both).
import type { Test } from 'tap'
import { resourceNames } from '../../cli/names.js'
import { starterFiles } from '../../cli/starter.js'
import { renderTemplate } from '../../cli/templates.js'
import type { Snippet, SnippetError } from './compile-snippets.js'

/** Where each snippet of this set says it comes from: its errors are the ones that start with it. */
export const HANDLER_SNIPPETS = 'handler-types/'

const header = "import { CloudFunction, type AuthenticatedRequest, type CloudRequest } from 'fastify-parse-kit'\n"
const options = "{ methods: ['GET'], validation: { fields: { id: { type: String, required: true }, limit: { type: Number } } } }"
const handler = (name: string, request: string): Snippet => ({
  file: `${HANDLER_SNIPPETS}${name}.ts`,
  line: 1,
  code: `${header}export class Handlers {\n  @CloudFunction(${options})\n  static handle (request: ${request}) { return request.params }\n}`
})

const cases = [
  handler('misspelt', 'CloudRequest<{ idd: string }>'),
  handler('retyped', 'CloudRequest<{ id: string, limit: string }>'),
  handler('optional', 'CloudRequest<{ id: string, limit: number }>'),
  handler('matching', 'CloudRequest<{ id: string, limit?: number }>'),
  {
    file: `${HANDLER_SNIPPETS}user.ts`,
    line: 1,
    code: `${header}export class Handlers {\n  @CloudFunction({ methods: ['GET'] })\n  static handle (request: AuthenticatedRequest) { return request.user.id }\n}`
  }
]

/** The Note files and a rendered Gadget resource, as a new project holds them (kit imports from 'fastify-parse-kit'). */
async function projectFiles (): Promise<Snippet[]> {
  const names = resourceNames('Gadget')
  const values = {
    Name: names.name, camelName: names.camel, variable: names.variable, pluralName: names.plural, prefix: names.prefix, kit: 'fastify-parse-kit',
    createMethod: names.methods.create, listMethod: names.methods.list, getMethod: names.methods.get,
    updateMethod: names.methods.update, deleteMethod: names.methods.delete, modelImport: '../models/Gadget.js'
  }
  const files = (await starterFiles()).filter(({ file }) => /^(models|functions)\//.test(file))
  files.push({ file: 'models/Gadget.ts', content: await renderTemplate('resource/model.ts', values) })
  files.push({ file: `functions/${names.prefix}.ts`, content: await renderTemplate('resource/functions.ts', values) })
  return files.map(({ file, content }) => ({ file: `${HANDLER_SNIPPETS}project/${file}`, line: 1, code: content, path: `project/${file}` }))
}

/** The typing cases and the project's files, to compile with the other snippets. */
export async function handlerSnippets (): Promise<Snippet[]> {
  return [...cases, ...await projectFiles()]
}

/** The checks on what compiling `snippets` (handlerSnippets()) answered: `errors`, those located in them. */
export function testHandlerTypes (t: Test, snippets: Snippet[], errors: SnippetError[]): void {
  const at = (name: string) => errors.filter((error) => error.where.startsWith(`${HANDLER_SNIPPETS}${name}.ts:`)).map((error) => error.message)
  const inProject = (error: SnippetError) => error.where.startsWith(`${HANDLER_SNIPPETS}project/`)

  t.test('an undeclared param is named', async (t) => {
    t.match(at('misspelt'), [/params\.idd: not declared in validation\.fields/])
  })

  t.test('a param typed differently from its field is named', async (t) => {
    t.match(at('retyped'), [/params\.limit: typed differently from its validation\.fields entry/])
  })

  t.test('an optional field typed as always present is named, with what to change', async (t) => {
    t.match(at('optional'), [/params\.limit: optional in validation\.fields .* possibly undefined/])
  })

  t.test('a user the declaration does not guarantee is named', async (t) => {
    t.match(at('user'), [/request\.user: not guaranteed by the declaration \(add requiresAuth/])
  })

  t.test('a matching handler compiles, and the errors stay short', async (t) => {
    t.same(at('matching'), [])
    const cased = new RegExp(`^${HANDLER_SNIPPETS}(misspelt|retyped|optional|user|matching)\\.ts:`)
    t.same(errors.filter((error) => !cased.test(error.where) && !inProject(error)), [], 'nothing else fails')
    for (const error of errors) t.ok(error.message.length < 1200, `${error.where}: ${error.message.length} characters`)
  })

  t.test('the Note files and a generated resource compile, with typed requests', async (t) => {
    t.same(errors.filter(inProject).map((error) => `${error.where} ${error.message}`), [])
    for (const { file, code } of snippets.filter(({ file }) => file.includes('/functions/'))) {
      const handlers = [...code.matchAll(/static async \w+ \(request: ([^)]*)\)/g)].map((match) => match[1])
      t.ok(handlers.length >= 5, `${file}: ${handlers.length} handlers`)
      t.same(handlers.filter((type) => type === 'CloudRequest'), [], `${file}: no handler takes untyped params`)
    }
  })
}
