// A temporary folder inside the checkout, for files that must resolve the
// checkout's packages and lib/, and compile with its tsconfig, as a
// project's would: under test/scratch/, which eslint.config.js ignores.
// `npm test` runs ESLint over test/ beside the lanes, and ESLint fails on a
// file removed while it walks the tree.
import { mkdirSync, mkdtempSync } from 'node:fs'
import path from 'node:path'

export function checkoutScratchDir (prefix: string): string {
  const scratch = path.join(import.meta.dirname, '..', 'scratch')
  mkdirSync(scratch, { recursive: true })
  return mkdtempSync(path.join(scratch, prefix))
}
