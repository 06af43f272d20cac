#!/usr/bin/env node
// The `fpk` / `fastify-parse-kit` command. The CLI is TypeScript run through
// tsx, so the same files serve a source checkout (no build step) and an
// installed package. The project's own tsconfig (wherever fpk is run) is not
// consulted: the CLI needs no compiler options.
import { register } from 'tsx/esm/api'

register({ tsconfig: false })
const { main } = await import('./fpk.ts')
process.exitCode = await main(process.argv)
