// Whether a checkout's dist/ already holds a build of its current sources, so
// `fpk new` can pack it as it is instead of running tsc again (npm pack's
// prepare script): every compiled source has its .js in dist/, written after
// the source and after the compiler settings last changed.
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'

/** What `npm run build` (tsconfig.build.json) compiles, relative to the root. */
function buildSources (root: string): string[] {
  const sources = ['plugin.ts']
  for (const dir of ['lib', 'cli']) {
    for (const entry of readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })) {
      const file = path.join(dir, entry)
      if (file.startsWith(path.join('cli', 'templates') + path.sep)) continue // copied as they are, never compiled
      if (file.endsWith('.ts') && !file.endsWith('.d.ts')) sources.push(file)
    }
  }
  return sources
}

/** The first reason the build in dist/ is not current, or undefined when it is. */
export function staleBuildReason (root: string): string | undefined {
  const mtime = (file: string) => statSync(path.join(root, file)).mtimeMs
  const settings = Math.max(...['tsconfig.json', 'tsconfig.build.json', 'package.json'].map(mtime))
  for (const source of buildSources(root)) {
    const output = path.join('dist', source.replace(/\.ts$/, '.js'))
    if (!existsSync(path.join(root, output))) return `${output} is missing`
    const built = mtime(output)
    if (built < mtime(source)) return `${source} changed after it was built`
    if (built < settings) return 'the compiler settings or package.json changed after the build'
  }
  return undefined
}
