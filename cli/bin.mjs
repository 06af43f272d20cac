#!/usr/bin/env node
// The `fpk` / `fastify-parse-kit` command. An installed package (and a checkout
// after `npm run build`) runs the compiled CLI in dist/cli/, so users need
// neither tsx nor esbuild. A checkout without dist/ runs the TypeScript sources
// through tsx, a devDependency there; the project's own tsconfig (wherever fpk
// is run) is not consulted: the CLI needs no compiler options.
import { existsSync } from 'node:fs'

const compiled = new URL('../dist/cli/fpk.js', import.meta.url)
let main
if (existsSync(compiled)) {
  ({ main } = await import(compiled.href))
} else {
  const { register } = await import('tsx/esm/api')
  register({ tsconfig: false })
  ;({ main } = await import('./fpk.ts'))
}
process.exitCode = await main(process.argv)
