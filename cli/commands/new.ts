// `fpk new <name>`: a project that boots and serves, with random keys, the
// sample Note resource, seeding, docs, a MongoDB compose file, a smoke test
// and assistant instruction files.
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { CliError, type Io } from '../context.js'
import { kitDependency, kitRange } from '../kit.js'
import { npmInstall } from '../install.js'
import { displayPath, outputName, renderTemplate, templateFiles, writeNewFiles, type OutputFile, type Values } from '../templates.js'
import { assistantFiles, chooseAssistants } from './ai.js'

export interface NewOptions {
  yes?: boolean
  /** false with --no-install */
  install?: boolean
  /** --ai=<comma list or none> */
  ai?: string
  /** --kit <path>: depend on a local kit folder */
  kit?: string
}

/** npm's rules for a package name, kept to what also makes a good folder name. */
const PROJECT_NAME = /^[a-z0-9][a-z0-9._-]*$/

export async function newProject (io: Io, name: string, options: NewOptions = {}): Promise<void> {
  if (!PROJECT_NAME.test(name) || name.length > 214) {
    throw new CliError(`"${name}" is not a usable project name: use lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (e.g. my-api). It names the folder and the package.`)
  }
  const dir = path.resolve(io.cwd, name)
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new CliError(`${displayPath(dir, io.cwd)} already exists and is not empty: choose another name or remove it.`)
  }
  const assistants = await chooseAssistants(io, options.ai, options.yes)
  const kit = kitDependency(dir, io.cwd, options.kit)

  const values: Values = {
    name,
    databaseName: name.replace(/[^A-Za-z0-9_]/g, '_'),
    appId: `${name}-${randomBytes(12).toString('hex')}`,
    masterKey: randomBytes(32).toString('base64url'),
    adminPassword: randomBytes(12).toString('base64url'),
    dashboardPassword: randomBytes(12).toString('base64url'),
    kitDependency: kit.spec,
    version_fastify: kitRange('fastify'),
    version_fastify_express: kitRange('@fastify/express'),
    version_fastify_swagger_ui: kitRange('@fastify/swagger-ui'),
    version_parse: kitRange('parse'),
    version_router: kitRange('router'),
    version_tsx: kitRange('tsx'),
    version_typescript: kitRange('typescript'),
    version_types_node: kitRange('@types/node')
  }
  const files: OutputFile[] = []
  for (const template of await templateFiles('project')) {
    const output = outputName(template)
    if (output === '.npmrc' && !kit.localPath) continue // only a file: dependency needs install-links
    files.push({
      path: path.join(dir, output),
      content: await renderTemplate(`project/${template}`, values),
      mode: output === '.env' ? 0o600 : undefined // it holds the master key
    })
  }
  files.push(...await assistantFiles(dir, assistants, { projectName: name, modelsDir: 'src/models', functionsDir: 'src/functions' }))
  await writeNewFiles(files, { cwd: io.cwd })

  const shown = displayPath(dir, io.cwd)
  io.out([
    `Created ${shown} (${files.length} files):`,
    ...files.map((file) => `  ${path.relative(dir, file.path).split(path.sep).join('/')}`).sort(),
    kit.localPath ? `fastify-parse-kit comes from ${kit.localPath} (${kit.spec}).` : `fastify-parse-kit ${kit.spec} comes from the npm registry.`,
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
