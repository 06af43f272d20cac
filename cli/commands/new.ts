// `fpk new <name>`: a project that boots and serves, with random keys, the
// sample Note resource, seeding, docs, a MongoDB compose file, a smoke test
// and assistant instruction files.
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { CliError, type Io } from '../context.js'
import { kitDependency, kitRange, projectOverrides, VENDOR_DIR } from '../kit.js'
import { kitTarball } from '../vendor.js'
import { npmInstall } from '../install.js'
import { starterFiles } from '../starter.js'
import { displayPath, outputName, renderTemplate, templateFiles, writeNewFiles, type OutputFile, type Values } from '../templates.js'
import { assistantFiles, chooseAssistants } from './ai.js'

export interface NewOptions {
  yes?: boolean
  /** -f: write into a folder that is not empty, replacing files of the same names */
  force?: boolean
  /** false with --no-install */
  install?: boolean
  /** --ai=<comma list or none> */
  ai?: string
  /** --kit <path>: the kit from a local folder or .tgz */
  kit?: string
}

/** npm's rules for a package name, kept to what also makes a good folder name. */
const PROJECT_NAME = /^[a-z0-9][a-z0-9._-]*$/
/** Names npm refuses for a package, though they pass the pattern above. */
const RESERVED_NAMES = new Set(['node_modules', 'favicon.ico'])

export async function newProject (io: Io, name: string, options: NewOptions = {}): Promise<void> {
  if (!PROJECT_NAME.test(name) || name.length > 214) {
    throw new CliError(`"${name}" is not a usable project name: use lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (e.g. my-api). It names the folder and the package.`)
  }
  if (RESERVED_NAMES.has(name)) throw new CliError(`"${name}" is not a usable project name: npm refuses it as a package name. Choose another (e.g. my-api).`)
  const dir = path.resolve(io.cwd, name)
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    throw new CliError(`${displayPath(dir, io.cwd)} exists and is a file, not a folder: choose another name or move the file.`)
  }
  if (existsSync(dir) && readdirSync(dir).length > 0 && !options.force) {
    throw new CliError(`${displayPath(dir, io.cwd)} already exists and is not empty: choose another name, remove it, or use -f to write into it.`)
  }
  const assistants = await chooseAssistants(io, options.ai, options.yes)
  const kit = kitDependency(io.cwd, options.kit)
  const tarball = kit.source ? await kitTarball(io, kit.source) : undefined

  const values: Values = {
    name,
    databaseName: name.replace(/[^A-Za-z0-9_]/g, '_'),
    appId: `${name}-${randomBytes(12).toString('hex')}`,
    masterKey: randomBytes(32).toString('base64url'),
    adminPassword: randomBytes(12).toString('base64url'),
    dashboardPassword: randomBytes(12).toString('base64url'),
    kitDependency: tarball ? `file:${VENDOR_DIR}/${tarball.name}` : kit.spec,
    version_close_with_grace: kitRange('close-with-grace'),
    version_env_schema: kitRange('env-schema'),
    version_fastify: kitRange('fastify'),
    version_fastify_express: kitRange('@fastify/express'),
    version_fastify_swagger_ui: kitRange('@fastify/swagger-ui'),
    version_openapi_fetch: kitRange('openapi-fetch'),
    version_openapi_typescript: kitRange('openapi-typescript'),
    version_parse: kitRange('parse'),
    version_router: kitRange('router'),
    version_tsx: kitRange('tsx'),
    version_typescript: kitRange('typescript'),
    version_types_node: kitRange('@types/node'),
    overrides: JSON.stringify(projectOverrides(), null, 2).replace(/\n/g, '\n  ')
  }
  const files: OutputFile[] = []
  for (const template of await templateFiles('project')) {
    const output = outputName(template)
    files.push({
      path: path.join(dir, output),
      content: await renderTemplate(`project/${template}`, values),
      mode: output === '.env' ? 0o600 : undefined // it holds the master key
    })
  }
  // The Note resource, seeding and serving: the example application's own files.
  for (const starter of await starterFiles()) files.push({ path: path.join(dir, 'src', starter.file), content: starter.content })
  if (tarball) files.push({ path: path.join(dir, VENDOR_DIR, tarball.name), content: tarball.content })
  files.push(...await assistantFiles(dir, assistants, { projectName: name, modelsDir: 'src/models', functionsDir: 'src/functions' }))
  const overwritten = await writeNewFiles(files, { cwd: io.cwd, force: options.force })

  const shown = displayPath(dir, io.cwd)
  io.out([
    `Created ${shown} (${files.length} files${overwritten.size > 0 ? `, ${overwritten.size} of them overwritten` : ''}):`,
    ...files.map((file) => `  ${path.relative(dir, file.path).split(path.sep).join('/')}${overwritten.has(file.path) ? ' (overwritten)' : ''}`).sort(),
    tarball ? `fastify-parse-kit is ${VENDOR_DIR}/${tarball.name} (packed from ${kit.source}; keep it with the project).` : `fastify-parse-kit ${kit.spec} comes from the npm registry.`,
    ''
  ].join('\n') + '\n')

  if (options.install !== false) await npmInstall(io, dir)

  io.out([
    'Next:',
    `  cd ${shown}`,
    ...(options.install === false ? ['  npm install'] : []),
    '  npm run dev          # embedded PostgreSQL, no Docker needed; prints a ready curl with a demo session token',
    '  npm test             # type-check and a smoke test',
    '  npx fpk g resource Product',
    ''
  ].join('\n') + '\n')
}
