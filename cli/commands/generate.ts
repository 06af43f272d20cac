// `fpk generate resource|model|functions|job <Name>` (`g` for short).
// Generation only creates files: models and functions are discovered at boot,
// so no registration file is edited.
import { existsSync, statSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { CliError, type Io } from '../context.js'
import { KIT_NAME } from '../kit.js'
import { jobNames, resourceNames, type ResourceNames } from '../names.js'
import { detectLayout, findProjectRoot, functionsFile, importSpecifier, modelFile, type Layout } from '../project.js'
import { displayPath, renderTemplate, writeNewFiles, type OutputFile } from '../templates.js'

export type GenerateKind = 'resource' | 'model' | 'functions'

export interface GenerateOptions {
  force?: boolean
}

export async function generate (io: Io, kind: GenerateKind, input: string, options: GenerateOptions = {}): Promise<void> {
  const names = resourceNames(input, kind !== 'model')
  const root = findProjectRoot(io.cwd)
  if (!root) throw new CliError(`no package.json in ${io.cwd} or above: run fpk g ${kind} inside a project (fpk new <name> creates one).`)
  const layout = detectLayout(root)
  let files: OutputFile[]
  if (kind === 'functions') {
    // Endpoints for a model the project already has: its file is only read, for the import.
    const model = await findDeclaration(names.name, layout, [])
    if (!model) {
      throw new CliError(`no model ${names.name} is declared under ${displayPath(layout.modelsDir, io.cwd)}: fpk g resource ${names.name} creates the model and its endpoints, fpk g model ${names.name} the model alone.`)
    }
    files = [await functionsFileFor(names, layout, model)]
  } else {
    files = [{ path: modelFile(layout, names), content: await renderTemplate('resource/model.ts', templateValues(names)) }]
    if (kind === 'resource') files.push(await functionsFileFor(names, layout, files[0].path))
    if (kind === 'resource' && !options.force && existsSync(files[0].path) && !existsSync(files[1].path)) {
      throw new CliError(`${displayPath(files[0].path, io.cwd)} already exists: nothing was written. fpk g functions ${names.name} adds the endpoints for it; -f overwrites.`)
    }
    const declared = await findDeclaration(names.name, layout, files.map((file) => file.path))
    if (declared) {
      throw new CliError(`class ${names.name} is already declared in ${declared}: nothing was written.${kind === 'resource' ? ` fpk g functions ${names.name} adds its endpoints without touching the model.` : ''}`)
    }
  }
  const kept: string[] = []
  const test = await testFileFor(kind, names, root)
  // A test the user may have extended is kept (and does not block the rest) unless -f.
  if (test && existsSync(test.path) && !options.force) kept.push(test.path)
  else if (test) files.push(test, ...await harnessFor(test.path))
  const overwritten = await writeNewFiles(files, { force: options.force, cwd: io.cwd })

  const lines = files.map((file) => `  ${overwritten.has(file.path) ? 'overwritten' : 'created'} ${displayPath(file.path, io.cwd)}`)
  for (const file of kept) lines.push(`  kept    ${displayPath(file, io.cwd)} (it exists; -f overwrites it)`)
  if (layout.fresh) lines.unshift(`No models/functions layout found: using ${displayPath(layout.modelsDir, io.cwd)} and ${displayPath(layout.functionsDir, io.cwd)} (make sure your kitPlugin options point at them).`)
  if (kind !== 'model') {
    const base = `${await projectMountPath(root)}/${names.prefix}`
    const m = names.methods
    lines.push(
      '',
      'Endpoints (under the mount path: MOUNT_PATH, /parse by default):',
      `  POST ${base}/${m.create}   body: the fields as JSON; needs a session token`,
      `  GET  ${base}/${m.list}?limit=10   the rows the caller may read, newest first: { results, next, count, countKind }; &after=<next> for the next page`,
      `  GET  ${base}/${m.get}?id=<objectId>`,
      `  POST ${base}/${m.update}   body: { "id": "<objectId>", …changed fields }`,
      `  POST ${base}/${m.delete}   body: { "id": "<objectId>" }`
    )
  }
  lines.push('', 'Nothing to register: the kit discovers new files at boot. `npm run dev` restarts by itself when a file under src/ is added or changed; restart `npm start` yourself.')
  io.out(lines.join('\n') + '\n')
}

function templateValues (names: ResourceNames): Record<string, string> {
  return {
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
}

async function functionsFileFor (names: ResourceNames, layout: Layout, model: string): Promise<OutputFile> {
  const functions = functionsFile(layout, names)
  return { path: functions, content: await renderTemplate('resource/functions.ts', { ...templateValues(names), modelImport: importSpecifier(functions, model) }) }
}

/**
 * test/<prefix>.test.ts (the five endpoints; g resource, g functions) or
 * test/<prefix>.model.test.ts (the class and its rules; g model), in the style
 * of the project's smoke test (all boot the app through test/harness.ts): only in a
 * project laid out as `fpk new` makes it (src/app.ts exporting buildApp), whose
 * `npm test` runs every test/*.test.ts.
 */
async function testFileFor (kind: GenerateKind, names: ResourceNames, root: string): Promise<OutputFile | undefined> {
  const app = path.join(root, 'src', 'app.ts')
  if (!existsSync(app) || !/export\s+(async\s+)?function\s+buildApp\b/.test(await readFile(app, 'utf8'))) return undefined
  const test = path.join(root, 'test', kind === 'model' ? `${names.prefix}.model.test.ts` : `${names.prefix}.test.ts`)
  const template = kind === 'model' ? 'resource/model.test.ts' : 'resource/test.ts'
  return { path: test, content: await renderTemplate(template, { ...templateValues(names), appImport: importSpecifier(test, app) }) }
}

/**
 * test/harness.ts, which every test of the project boots the app with (fpk new
 * writes it): written from the same template when missing, never replaced (the
 * project's other tests use it too).
 */
async function harnessFor (test: string): Promise<OutputFile[]> {
  const harness = path.join(path.dirname(test), 'harness.ts')
  return existsSync(harness) ? [] : [{ path: harness, content: await renderTemplate('project/test/harness.ts', {}) }]
}

/** The file (other than `targets`) that declares @ParseClass('<Name>'); a second declaration would fail at boot. */
async function findDeclaration (name: string, layout: Layout, targets: string[]): Promise<string | undefined> {
  const declaration = new RegExp(`@ParseClass\\(\\s*['"\`]${name}['"\`]`)
  for (const dir of new Set([layout.modelsDir, layout.functionsDir])) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) continue // a file in its place is refused when writing
    const entries = await readdir(dir, { withFileTypes: true, recursive: true })
    for (const entry of entries) {
      if (!entry.isFile() || !/\.(ts|mts|js|mjs)$/.test(entry.name)) continue
      const file = path.join(entry.parentPath, entry.name)
      if (targets.includes(file)) continue
      if (declaration.test(await readFile(file, 'utf8'))) return file
    }
  }
  return undefined
}

/** The mount path the project serves under, as the kit reads it (mountPath / MOUNT_PATH from the environment or the project's .env), without a trailing slash. */
export async function projectMountPath (root: string): Promise<string> {
  const fromEnv = process.env.mountPath ?? process.env.MOUNT_PATH
  const dotEnv = await readFile(path.join(root, '.env'), 'utf8').catch(() => '')
  const fromFile = /^\s*(?:mountPath|MOUNT_PATH)\s*=\s*["']?([^"'\s#]+)/m.exec(dotEnv)?.[1]
  const mount = fromEnv ?? fromFile ?? '/parse'
  return mount === '/' ? '' : `/${mount.replace(/^\/+|\/+$/g, '')}`
}

/**
 * `fpk g job <Name>`: a job file in the functions directory (discovered at boot
 * like any handler file) and, in a project laid out as `fpk new` makes it, its test.
 */
export async function generateJob (io: Io, input: string, options: GenerateOptions = {}): Promise<void> {
  const names = jobNames(input)
  const root = findProjectRoot(io.cwd)
  if (!root) throw new CliError(`no package.json in ${io.cwd} or above: run fpk g job inside a project (fpk new <name> creates one).`)
  const layout = detectLayout(root)
  const values = { Name: names.name, className: names.className, jobName: names.jobName, kebab: names.kebab, kit: KIT_NAME }
  const jobFile = path.join(layout.functionsDir, `${names.kebab}-job.ts`)
  const declared = await findJob(names.jobName, layout, [jobFile])
  if (declared) throw new CliError(`a job named ${names.jobName} is already declared in ${displayPath(declared, io.cwd)}: nothing was written. Choose another name.`)
  const files: OutputFile[] = [{ path: jobFile, content: await renderTemplate('job/job.ts', values) }]
  const app = path.join(root, 'src', 'app.ts')
  if (existsSync(app) && /export\s+(async\s+)?function\s+buildApp\b/.test(await readFile(app, 'utf8'))) {
    const test = path.join(root, 'test', `${names.kebab}-job.test.ts`)
    files.push({ path: test, content: await renderTemplate('job/test.ts', { ...values, appImport: importSpecifier(test, app) }) }, ...await harnessFor(test))
  }
  const overwritten = await writeNewFiles(files, { force: options.force, cwd: io.cwd })
  const lines = files.map((file) => `  ${overwritten.has(file.path) ? 'overwritten' : 'created'} ${displayPath(file.path, io.cwd)}`)
  lines.push(
    '',
    `Job ${names.jobName}: run it from Parse Dashboard (Jobs → Run now) or with POST ${await projectMountPath(root)}/jobs/${names.jobName} and the master key;`,
    'uncomment its @Cron to run it on a schedule (each tick on one instance only). Nothing to register: it is discovered at boot.'
  )
  io.out(lines.join('\n') + '\n')
}

/** The file (other than `targets`) whose static method is already the job `jobName`. */
async function findJob (jobName: string, layout: Layout, targets: string[]): Promise<string | undefined> {
  const declaration = new RegExp(`@(Job|Cron)\\([^\\n]*\\n\\s*(@[^\\n]*\\n\\s*)*static\\s+(async\\s+)?${jobName}\\s*\\(`)
  for (const dir of new Set([layout.modelsDir, layout.functionsDir])) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) continue // a file in its place is refused when writing
    for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || !/\.(ts|mts|js|mjs)$/.test(entry.name)) continue
      const file = path.join(entry.parentPath, entry.name)
      if (!targets.includes(file) && declaration.test(await readFile(file, 'utf8'))) return file
    }
  }
  return undefined
}
