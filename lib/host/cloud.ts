// The `cloud` function Parse Server runs at start: the kit's triggers first,
// then the application's own cloud code (a function or a file path), if any.
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { registerTriggers } from '../triggers/register.js'
import { registerJobs } from '../jobs/register.js'

type CloudCode = ((parse: unknown) => unknown) | string | undefined

/** `afterUserCloud` runs last, to wrap triggers the application may have set (cluster mode's _Role hooks). */
export function composeCloud (userCloud: unknown, afterUserCloud?: () => void): (parse: unknown) => Promise<void> {
  return async (parse: unknown) => {
    registerTriggers((parse as { Cloud: Record<string, (...args: unknown[]) => unknown> }).Cloud)
    registerJobs((parse as { Cloud: Record<string, (...args: unknown[]) => unknown> }).Cloud)
    const cloud = userCloud as CloudCode
    if (typeof cloud === 'function') await cloud(parse)
    else if (typeof cloud === 'string') await import(pathToFileURL(path.resolve(cloud)).href)
    afterUserCloud?.()
  }
}
