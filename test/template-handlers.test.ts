// The generated project's Note handlers (the example app's, as cli/starter.ts
// copies them) and the resource template, rendered as `fpk new` / `fpk g
// resource` write them, served by a real kit: the master key alone gets a
// clear 4xx where a handler needs a user, and a user still works.
import t from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { resourceNames } from '../cli/names.js'
import { starterFiles } from '../cli/starter.js'
import { renderTemplate } from '../cli/templates.js'
import { appHeaders, masterHeaders, startKit } from './helpers/kit.js'

const here = path.dirname(fileURLToPath(import.meta.url))

/** Under this checkout, so the rendered files resolve parse and the kit from its node_modules and lib/. */
async function renderProject (): Promise<string> {
  const root = mkdtempSync(path.join(here, 'rendered-'))
  for (const dir of ['models', 'functions']) mkdirSync(path.join(root, dir))
  const kit = path.relative(path.join(root, 'functions'), path.join(here, '..', 'lib', 'index.js')).split(path.sep).join('/')
  const fromKit = (text: string) => text.replaceAll("from 'fastify-parse-kit'", `from '${kit}'`)
  for (const { file, content } of await starterFiles()) {
    if (file.startsWith('models/') || file.startsWith('functions/')) writeFileSync(path.join(root, file), fromKit(content))
  }
  return root
}

async function renderResource (root: string, name: string): Promise<void> {
  const names = resourceNames(name)
  const kit = path.relative(path.join(root, 'functions'), path.join(here, '..', 'lib', 'index.js')).split(path.sep).join('/')
  const values = {
    Name: names.name, camelName: names.camel, variable: names.variable, pluralName: names.plural, prefix: names.prefix, kit,
    createMethod: names.methods.create, listMethod: names.methods.list, getMethod: names.methods.get,
    updateMethod: names.methods.update, deleteMethod: names.methods.delete, modelImport: `../models/${names.name}.js`
  }
  writeFileSync(path.join(root, 'models', `${names.name}.ts`), await renderTemplate('resource/model.ts', values))
  writeFileSync(path.join(root, 'functions', `${names.prefix}.ts`), await renderTemplate('resource/functions.ts', values))
}

t.test('templates: handlers that need a user, called with the master key alone', async (t) => {
  const root = await renderProject()
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  await renderResource(root, 'Gadget')
  const kit = await startKit(t, { models: path.join(root, 'models'), functions: path.join(root, 'functions') })
  const user = await kit.signUp('tess')
  const asUser = { ...appHeaders, 'x-parse-session-token': user.token }
  // The answers carry no ACL (their response schemas leave it out): read it as stored.
  const storedACL = async (className: string, id: string) => (await kit.request('GET', `/parse/classes/${className}/${id}`, { headers: masterHeaders })).json?.ACL

  for (const url of ['/parse/notes/createNote', '/parse/gadgets/createGadget']) {
    const body = url.includes('Note') ? { title: 'by the master key' } : { name: 'by the master key' }
    const refused = await kit.request('POST', url, { headers: masterHeaders, body })
    t.equal(refused.status, 400, `${url}: ${refused.text}`)
    t.equal(refused.json.code, 119)
    t.match(refused.json.error, /send X-Parse-Session-Token/)
    const created = await kit.request('POST', url, { headers: asUser, body })
    t.equal(created.status, 200, `${url} with a session: ${created.text}`)
    t.same(await storedACL(url.includes('Note') ? 'Note' : 'Gadget', created.json.objectId), { [user.id]: { read: true, write: true }, ...(url.includes('Gadget') ? { '*': { read: true } } : {}) }, 'owned by the caller')
  }

  const note = await kit.request('POST', '/parse/notes/createNote', { headers: asUser, body: { title: 'mine' } })
  const edited = await kit.request('POST', '/parse/notes/updateNote', { headers: masterHeaders, body: { id: note.json.objectId, status: 'published' } })
  t.equal(edited.status, 200, `the master key may still edit a note: ${edited.text}`)
  t.same(await storedACL('Note', note.json.objectId), { [user.id]: { read: true, write: true }, '*': { read: true } }, 'the owner keeps the note')
})

t.test('templates: the rendered resource under another mount path, its list limit clamped', async (t) => {
  // The resource alone: the starter's Note is already declared in this process.
  const root = mkdtempSync(path.join(here, 'rendered-'))
  for (const dir of ['models', 'functions']) mkdirSync(path.join(root, dir))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  await renderResource(root, 'Widget')
  const kit = await startKit(t, { mountPath: '/api', models: path.join(root, 'models'), functions: path.join(root, 'functions') })
  const user = await kit.signUp('gus')
  const asUser = { ...appHeaders, 'x-parse-session-token': user.token }
  for (const name of ['one', 'two', 'three']) {
    const created = await kit.request('POST', '/api/widgets/createWidget', { headers: asUser, body: { name } })
    t.equal(created.status, 200, created.text)
  }
  const limited = await kit.request('GET', '/api/widgets/listWidgets?limit=2', { headers: appHeaders })
  t.equal(limited.status, 200, limited.text)
  t.equal(limited.json.results.length, 2, 'the limit asked for')
  t.equal(limited.json.count, 3, 'and the count of all')
  const all = await kit.request('GET', '/api/widgets/listWidgets', { headers: appHeaders })
  t.equal(all.json.results.length, 3, 'no limit: the default (100)')
  t.equal((await kit.request('GET', '/parse/widgets/listWidgets', { headers: appHeaders })).status, 404, 'nothing under /parse')
})
