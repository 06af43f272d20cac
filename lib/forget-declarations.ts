// The decorators fill process-wide registries when a file is imported, and a
// kit serves everything declared in its process. A process that runs several
// independent sets of declarations one after another (the test suite runs
// many test files in one process) forgets the declarations made so far before
// the next set, and revives those of each already-imported file the next set
// imports again (a module runs its decorators only once per process).
import { realFile, type ForgottenDeclaration } from './declaring-file.js'
import { forgetJobs } from './jobs/registry.js'
import { currentKitState } from './kit-state.js'
import { forgetModelClasses } from './model/decorators.js'
import { forgetCloudCode } from './parse/parse-calls.js'
import { forgetFunctions } from './routing/registry.js'
import { forgetTransactional } from './storage/transaction.js'
import { forgetTriggers } from './triggers/decorators.js'

/** Forgotten declarations by the file that made them, in declaration order. */
const forgotten = new Map<string, Array<() => void>>()

/**
 * Forgets every declaration made so far, and the Cloud Code Parse keeps from
 * the last server (its triggers came from them; the next server's start runs
 * its own `cloud` again). Refused while a kit runs.
 */
export function forgetDeclarations (): void {
  const running = currentKitState().appId
  if (running !== undefined) throw new Error(`forgetDeclarations: the kit of app "${running}" still runs; close it first`)
  forgetCloudCode()
  const taken: ForgottenDeclaration[] = [...forgetModelClasses(), ...forgetFunctions(), ...forgetTriggers(), ...forgetJobs(), ...forgetTransactional()]
  for (const { file, revive } of taken) {
    if (file === undefined) continue
    const list = forgotten.get(file) ?? []
    list.push(revive)
    forgotten.set(file, list)
  }
}

/** Puts back what `file` declared before it was forgotten (a no-op for a file imported for the first time). */
export function reviveDeclarations (file: string): void {
  // An application's boot (the loader calls this after each import) forgot nothing: no path to resolve.
  if (forgotten.size === 0) return
  const real = realFile(file)
  const revivals = forgotten.get(real)
  if (!revivals) return
  forgotten.delete(real)
  for (const revive of revivals) revive()
}
