// `fpk generate resource <Name>` / `fpk generate model <Name>` (`g` for short).
// Generation only creates files: models and functions are discovered at boot,
// so no registration file is edited.
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { CliError, type Io } from '../context.js'
import { KIT_NAME } from '../kit.js'
import { resourceNames, type ResourceNames } from '../names.js'
import { detectLayout, findProjectRoot, functionsFile, importSpecifier, modelFile, type Layout } from '../project.js'
import { displayPath, renderTemplate, writeNewFiles, type OutputFile } from '../templates.js'

export type GenerateKind = 'resource' | 'model'

export interface GenerateOptions {
  force?: boolean
}

export async function generate (io: Io, kind: GenerateKind, input: string, options: GenerateOptions = {}): Promise<void> {
  const names = resourceNames(input)
  const root = findProjectRoot(io.cwd)
  if (!root) throw new CliError(`no package.json in ${io.cwd} or above: run fpk ${kind === 'model' ? 'g model' : 'g resource'} inside a project (fpk new <name> creates one).`)
  const layout = detectLayout(root)
  const files = await generatedFiles(kind, names, layout)
  await refuseDuplicateClass(names.name, layout, files.map((file) => file.path))
  await writeNewFiles(files, { force: options.force, cwd: io.cwd })

  const lines = files.map((file) => `  created ${displayPath(file.path, io.cwd)}`)
  if (layout.fresh) lines.unshift(`No models/functions layout found: using ${displayPath(layout.modelsDir, io.cwd)} and ${displayPath(layout.functionsDir, io.cwd)} (make sure your kitPlugin options point at them).`)
  if (kind === 'resource') {
    const base = `/parse/${names.prefix}`
    const m = names.methods
    lines.push(
      '',
      'Endpoints (under the mount path, /parse by default):',
      `  POST ${base}/${m.create}   body: the fields as JSON; needs a session token`,
      `  GET  ${base}/${m.list}?limit=10   the rows the caller may read: { results, count }`,
      `  GET  ${base}/${m.get}?id=<objectId>`,
      `  POST ${base}/${m.update}   body: { "id": "<objectId>", …changed fields }`,
      `  POST ${base}/${m.delete}   body: { "id": "<objectId>" }`
    )
  }
  lines.push('', 'Nothing to register: restart the server (npm run dev restarts by itself) and the kit discovers the new files.')
  io.out(lines.join('\n') + '\n')
}

async function generatedFiles (kind: GenerateKind, names: ResourceNames, layout: Layout): Promise<OutputFile[]> {
  const model = modelFile(layout, names)
  const values = {
    Name: names.name,
    camelName: names.camel,
    variable: names.variable,
    pluralName: names.plural,
    prefix: names.prefix,
    kit: KIT_NAME,
    createMethod: names.methods.create,
    listMethod: names.methods.list,
    getMethod: names.methods.get,
    updateMethod: names.methods.update,
    deleteMethod: names.methods.delete
  }
  const files: OutputFile[] = [{ path: model, content: await renderTemplate('resource/model.ts', values) }]
  if (kind === 'resource') {
    const functions = functionsFile(layout, names)
    files.push({ path: functions, content: await renderTemplate('resource/functions.ts', { ...values, modelImport: importSpecifier(functions, model) }) })
  }
  return files
}

/** A second @ParseClass('<Name>') in another file would fail at boot: refuse it now, naming the file. */
async function refuseDuplicateClass (name: string, layout: Layout, targets: string[]): Promise<void> {
  const declaration = new RegExp(`@ParseClass\\(\\s*['"\`]${name}['"\`]`)
  for (const dir of new Set([layout.modelsDir, layout.functionsDir])) {
    if (!existsSync(dir)) continue
    const entries = await readdir(dir, { withFileTypes: true, recursive: true })
    for (const entry of entries) {
      if (!entry.isFile() || !/\.(ts|mts|js|mjs)$/.test(entry.name)) continue
      const file = path.join(entry.parentPath, entry.name)
      if (targets.includes(file)) continue
      if (declaration.test(await readFile(file, 'utf8'))) {
        throw new CliError(`class ${name} is already declared in ${file}: nothing was written.`)
      }
    }
  }
}
