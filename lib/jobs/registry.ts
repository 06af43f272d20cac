// Declared jobs, filled when @Job and @Cron run at import. Class metadata, like
// the route and trigger registries: it outlives any one kit.
import { JobDeclarationError } from '../errors.js'
import { declaringFile, type ForgottenDeclaration } from '../declaring-file.js'
import type { JobOptions } from './options.js'

export interface CronSchedule {
  expression: string
  timezone: string
  catchUp: boolean
  params: Record<string, unknown>
}

export interface JobDeclaration {
  owner: object
  method: string
  /** The name given with @Job or @Cron, if any; else the method's name. */
  givenName?: string
  options: JobOptions
  crons: CronSchedule[]
  /** The source file that declared it, when the call stack tells (see lib/forget-declarations.ts). */
  file?: string
}

const declarations: JobDeclaration[] = []

export function declaredJobs (): readonly JobDeclaration[] {
  return declarations
}

/** Drops every declared job (see lib/forget-declarations.ts). */
export function forgetJobs (): ForgottenDeclaration[] {
  return declarations.splice(0).map((declaration) => ({ file: declaration.file, revive: () => { declarations.push(declaration) } }))
}

export function jobName (declaration: JobDeclaration): string {
  return declaration.givenName ?? declaration.method
}

/** The declaration of this method, made on first use; @Job and @Cron on one method share it. */
export function declarationFor (owner: object, method: string): JobDeclaration {
  let found = declarations.find((entry) => entry.owner === owner && entry.method === method)
  if (!found) {
    found = { owner, method, options: {}, crons: [], file: declaringFile() }
    declarations.push(found)
  }
  return found
}

/** Sets the name once; a second, different one on the same method is a mistake. Names are unique across classes. */
export function nameDeclaration (declaration: JobDeclaration, name: string | undefined, where: string): void {
  if (name === undefined) return
  if (declaration.givenName !== undefined && declaration.givenName !== name) {
    throw new JobDeclarationError(`${where}: the job is already named "${declaration.givenName}"; give the name once (on @Job, or on @Cron when it stands alone)`)
  }
  declaration.givenName = name
}

/** Two methods may not declare the same job name: Parse keeps one job per name. */
export function checkUniqueNames (): void {
  const seen = new Map<string, string>()
  for (const declaration of declarations) {
    const name = jobName(declaration)
    const owner = `${(declaration.owner as { name?: string }).name}.${declaration.method}`
    const previous = seen.get(name)
    if (previous && previous !== owner) throw new JobDeclarationError(`job "${name}" is declared twice (${previous} and ${owner}); Parse keeps one job per name. Rename one with @Job({ name: '…' }).`)
    seen.set(name, owner)
  }
}
