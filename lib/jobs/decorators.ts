// @Job and @Cron on static methods. They record the method and check what they
// were given at import; the plugin registers the jobs with Parse at boot and
// runs the schedules once it is up (see register.ts and scheduler.ts).
import { assertLegacyDecorator } from '../model/legacy-decorators.js'
import { JobDeclarationError } from '../errors.js'
import { checkCronOptions, checkJobOptions, cronPattern, type CronOptions, type JobOptions } from './options.js'
import { checkUniqueNames, declarationFor, nameDeclaration } from './registry.js'

function staticMethod (decorator: string, target: unknown, propertyKey: unknown, descriptor?: PropertyDescriptor): { owner: object, method: string, where: string } {
  assertLegacyDecorator(decorator, propertyKey)
  const method = String(propertyKey)
  if (typeof target !== 'function') {
    const owner = (target as { constructor: { name: string } }).constructor.name
    throw new JobDeclarationError(`${decorator} on ${owner}.${method}: jobs must be static methods (static async ${method} (request: JobRequest) { … })`)
  }
  const where = `${decorator} on ${(target as { name: string }).name}.${method}`
  if (typeof descriptor?.value !== 'function') throw new JobDeclarationError(`${where}: decorate a method`)
  return { owner: target, method, where }
}

/**
 * Declares a Parse job: run by hand (POST {mount}/jobs/{name} with the master
 * key, Parse.Cloud.startJob, the Dashboard's "Run now") or by a schedule, each
 * run recorded in _JobStatus.
 */
export function Job (options: JobOptions = {}) {
  return function (target: object, propertyKey: string | symbol, descriptor?: PropertyDescriptor): void {
    const { owner, method, where } = staticMethod('@Job', target, propertyKey, descriptor)
    const checked = checkJobOptions(where, options)
    const declaration = declarationFor(owner, method)
    nameDeclaration(declaration, checked.name, where)
    declaration.options = checked
    checkUniqueNames()
  }
}

/**
 * Runs the job on a schedule: five fields (minute hour day month weekday) or
 * six with seconds first, read in `timezone` (default UTC). Each tick runs on
 * exactly one instance. Alone it declares the job too; with @Job it takes that
 * job's options. Several @Cron on one method add several schedules.
 */
export function Cron (expression: string, options: CronOptions = {}) {
  return function (target: object, propertyKey: string | symbol, descriptor?: PropertyDescriptor): void {
    const { owner, method, where } = staticMethod('@Cron', target, propertyKey, descriptor)
    const checked = checkCronOptions(where, options)
    cronPattern(where, expression, checked.timezone)
    const declaration = declarationFor(owner, method)
    nameDeclaration(declaration, checked.name, where)
    declaration.crons.push({ expression, timezone: checked.timezone ?? 'UTC', catchUp: checked.catchUp ?? false, params: checked.params ?? {} })
    checkUniqueNames()
  }
}
