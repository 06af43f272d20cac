// Where this copy of fastify-parse-kit lives, and how a new project should
// depend on it: by version when it was installed from the registry, by
// `file:` path when it runs from a source checkout (or --kit says so).
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CliError } from './context.js'

export const KIT_NAME = 'fastify-parse-kit'

/** The package root: the folder above cli/. */
export const KIT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export interface KitPackage {
  name: string
  version: string
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  peerDependencies: Record<string, string>
}

let cached: KitPackage | undefined

export function kitPackage (): KitPackage {
  if (!cached) {
    const json = JSON.parse(readFileSync(path.join(KIT_ROOT, 'package.json'), 'utf8'))
    cached = {
      name: json.name,
      version: json.version,
      dependencies: json.dependencies ?? {},
      devDependencies: json.devDependencies ?? {},
      peerDependencies: json.peerDependencies ?? {}
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
  /** Set when the kit is a local folder (`file:`). */
  localPath?: string
}

/**
 * `--kit <path>` or a source checkout: `file:<path relative to the project>`.
 * Otherwise the registry version this CLI belongs to.
 */
export function kitDependency (projectDir: string, cwd: string, kitOption?: string): KitDependency {
  let local: string | undefined
  if (kitOption !== undefined) {
    local = path.resolve(cwd, kitOption)
    const manifest = path.join(local, 'package.json')
    if (!existsSync(manifest)) throw new CliError(`--kit ${kitOption}: no package.json in ${local}`)
    const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name
    if (name !== KIT_NAME) throw new CliError(`--kit ${kitOption}: ${local} holds "${name}", not ${KIT_NAME}`)
  } else if (runningFromCheckout()) {
    local = KIT_ROOT
  }
  if (local === undefined) return { spec: `^${kitPackage().version}` }
  const relative = path.relative(projectDir, local).split(path.sep).join('/')
  return { spec: `file:${relative === '' ? '.' : relative}`, localPath: local }
}
