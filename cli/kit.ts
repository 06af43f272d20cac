// Where this copy of fastify-parse-kit lives, and how a new project should
// depend on it: by version when it was installed from the registry, by
// `file:` path when it runs from a source checkout (or --kit says so).
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CliError } from './context.js'

export const KIT_NAME = 'fastify-parse-kit'

/** The package root: the folder above cli/ (sources) or above dist/cli/ (compiled), the first with a package.json. */
export const KIT_ROOT = packageRoot(path.dirname(fileURLToPath(import.meta.url)))

function packageRoot (from: string): string {
  for (let dir = path.dirname(from); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`)
  }
}

export interface KitPackage {
  name: string
  version: string
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  peerDependencies: Record<string, string>
  /** Pins the kit's own install relies on; a project repeats them (npm applies only the root's). */
  overrides: Record<string, unknown>
}

let cached: KitPackage | undefined

/**
 * Overrides only the kit's own development tools need, which a project does
 * not install: unrs-resolver is the linter's import resolver (neostandard),
 * pinned so that the kit's lock lists every platform binding.
 */
const KIT_DEVELOPMENT_OVERRIDES: ReadonlySet<string> = new Set(['unrs-resolver'])

/** The kit's overrides a generated project repeats at its root (npm applies only the root's): those for packages it installs. */
export function projectOverrides (): Record<string, unknown> {
  return Object.fromEntries(Object.entries(kitPackage().overrides).filter(([name]) => !KIT_DEVELOPMENT_OVERRIDES.has(name)))
}

export function kitPackage (): KitPackage {
  if (!cached) {
    const json = JSON.parse(readFileSync(path.join(KIT_ROOT, 'package.json'), 'utf8'))
    cached = {
      name: json.name,
      version: json.version,
      dependencies: json.dependencies ?? {},
      devDependencies: json.devDependencies ?? {},
      peerDependencies: json.peerDependencies ?? {},
      overrides: json.overrides ?? {}
    }
  }
  return cached
}

/** The version range this kit uses for a package (dependencies first), for the generated package.json. */
export function kitRange (name: string): string {
  const { dependencies, devDependencies, peerDependencies } = kitPackage()
  const range = dependencies[name] ?? devDependencies[name] ?? peerDependencies[name]
  if (!range) throw new Error(`${KIT_NAME}'s package.json does not list ${name}`)
  return range
}

/** An installed package sits under node_modules; anything else is a checkout. */
export function runningFromCheckout (root = KIT_ROOT): boolean {
  return !root.split(path.sep).includes('node_modules')
}

export interface KitDependency {
  /** The value for "fastify-parse-kit" in the new package.json. */
  spec: string
  /** A local kit (a folder to pack, or a .tgz) copied into the project as vendor/<tarball>. */
  source?: string
}

export const VENDOR_DIR = 'vendor'

/**
 * Where a new project gets the kit. `--kit <folder or .tgz>`, a source checkout,
 * or a copy installed from a local tarball (npx ./fastify-parse-kit-x.y.z.tgz):
 * a tarball vendored into the project, so the project keeps working when the
 * checkout or the tarball moves. Otherwise the registry version this CLI belongs to.
 */
export function kitDependency (cwd: string, kitOption?: string): KitDependency {
  const source = kitOption !== undefined ? checkedKitOption(cwd, kitOption) : runningFromCheckout() ? KIT_ROOT : installedFrom()
  if (source === undefined) return { spec: `^${kitPackage().version}` }
  const tarball = source.endsWith('.tgz') ? path.basename(source) : `${KIT_NAME}-${kitPackage().version}.tgz`
  return { spec: `file:${VENDOR_DIR}/${tarball}`, source }
}

function checkedKitOption (cwd: string, kitOption: string): string {
  const local = path.resolve(cwd, kitOption)
  if (!existsSync(local)) throw new CliError(`--kit ${kitOption}: ${local} does not exist`)
  if (local.endsWith('.tgz')) return local
  const manifest = path.join(local, 'package.json')
  if (!existsSync(manifest)) throw new CliError(`--kit ${kitOption}: no package.json in ${local} (give the kit's folder or a .tgz from npm pack)`)
  const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name
  if (name !== KIT_NAME) throw new CliError(`--kit ${kitOption}: ${local} holds "${name}", not ${KIT_NAME}`)
  return local
}

/** The local tarball or folder the package that installed this copy names (npx keeps one such package.json). */
function installedFrom (): string | undefined {
  const parts = KIT_ROOT.split(path.sep)
  const owner = parts.slice(0, parts.lastIndexOf('node_modules')).join(path.sep)
  try {
    const manifest = JSON.parse(readFileSync(path.join(owner, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }
    const spec = manifest.dependencies?.[KIT_NAME]
    if (!spec?.startsWith('file:')) return undefined
    const local = path.resolve(owner, spec.slice('file:'.length))
    return existsSync(local) ? local : undefined
  } catch {
    return undefined
  }
}
