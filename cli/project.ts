// Finds the project fpk runs in and the layout its models and handlers follow.
// The kit discovers both directories at boot, so generating a resource only
// means putting files where the application already looks.
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import type { ResourceNames } from './names.js'

export function findProjectRoot (cwd: string): string | undefined {
  let dir = path.resolve(cwd)
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

export function projectName (root: string): string {
  try {
    const name = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name?: unknown }).name
    if (typeof name === 'string' && name !== '') return name
  } catch {
    // no readable package.json: the folder name will do
  }
  return path.basename(root)
}

export type LayoutKind = 'models-functions' | 'cloud'

export interface Layout {
  kind: LayoutKind
  /** Where model files go: <base>/models/<Name>.ts */
  modelsDir: string
  /** Where functions files go: <base>/functions/<prefix>.ts, or <cloud>/<prefix>.ts */
  functionsDir: string
  /** Neither layout existed yet. */
  fresh: boolean
}

function isDirectory (candidate: string): boolean {
  return existsSync(candidate) && statSync(candidate).isDirectory()
}

/**
 * In order: models/ and functions/ (under src/ or at the root); a cloud-code
 * directory (src/cloud or cloud) holding per-entity functions files, with its
 * models in cloud/models/; otherwise a fresh models/ + functions/ pair, under
 * src/ when the project has one.
 */
export function detectLayout (root: string): Layout {
  const bases = [path.join(root, 'src'), root]
  for (const base of bases) {
    const modelsDir = path.join(base, 'models')
    const functionsDir = path.join(base, 'functions')
    if (isDirectory(modelsDir) || isDirectory(functionsDir)) return { kind: 'models-functions', modelsDir, functionsDir, fresh: false }
  }
  for (const base of bases) {
    const cloud = path.join(base, 'cloud')
    if (isDirectory(cloud)) return { kind: 'cloud', modelsDir: path.join(cloud, 'models'), functionsDir: cloud, fresh: false }
  }
  const base = isDirectory(bases[0]) ? bases[0] : root
  return { kind: 'models-functions', modelsDir: path.join(base, 'models'), functionsDir: path.join(base, 'functions'), fresh: true }
}

export function modelFile (layout: Layout, names: ResourceNames): string {
  return path.join(layout.modelsDir, `${names.name}.ts`)
}

export function functionsFile (layout: Layout, names: ResourceNames): string {
  return path.join(layout.functionsDir, `${names.prefix}.ts`)
}

/** The ESM specifier one generated file uses to import another: "../models/Product.js". */
export function importSpecifier (fromFile: string, toFile: string): string {
  let relative = path.relative(path.dirname(fromFile), toFile).split(path.sep).join('/')
  if (!relative.startsWith('.')) relative = `./${relative}`
  return relative.replace(/\.ts$/, '.js')
}
