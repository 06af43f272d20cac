// What @fastify/swagger shows for each route. A declared function appears
// once: at its @Route path, or at /functions/{name} when it has no @Route,
// with the verbs it declared; its route schema (the TypeBox schema Fastify
// validates with) becomes query parameters (GET) or a JSON body (others).
// The kit's plumbing (Parse's catch-all, 405 answers, the /functions alias of
// a routed function) is hidden; the application's own routes pass unchanged.
import type { FastifySchema, RouteOptions } from 'fastify'
import type { DeclaredFunction } from '../routing/registry.js'
import type { HttpMethod } from '../routing/options.js'
import { functionSecurity } from './security.js'

/** Operation extension naming the Cloud Function behind an operation. */
export const FUNCTION_EXTENSION = 'x-parse-function'

type DocSchema = FastifySchema & Record<string, unknown>

export interface RouteDocs {
  schema: DocSchema | undefined
  url: string
}

export function documentRoute (route: RouteOptions, schema: DocSchema | undefined, url: string, kitOwned: boolean): RouteDocs {
  const fn = route.config?.cloudFunction
  if (!fn) return kitOwned ? hidden(schema, url) : { schema, url }
  if (!shown(fn, url, methodsOf(route))) return hidden(schema, url)
  const fields = operationFields(fn)
  // `returns` is the route's 200 response schema: shown under a description of its own, not "Default Response".
  const answer = (schema?.response as Record<string, Record<string, unknown>> | undefined)?.[200]
  if (answer) fields.response = { 200: { ...answer, description: answer.description ?? `What ${fn.name} answers` }, ...(fields.response as object) }
  return { schema: { ...schema, ...fields }, url }
}

function hidden (schema: DocSchema | undefined, url: string): RouteDocs {
  return { schema: { ...schema, hide: true }, url }
}

/** The route's verbs, without the HEAD a GET route answers too (routing/head-route.ts). */
function methodsOf (route: RouteOptions): string[] {
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((method) => method.toUpperCase())
  return methods.includes('GET') ? methods.filter((method) => method !== 'HEAD') : methods
}

/** The verbs a function without @Route is documented with at /functions/{name}. */
export function functionsPathMethods (fn: DeclaredFunction): HttpMethod[] {
  // The path serves every declared verb (and POST, for Parse.Cloud.run): the declared ones are documented.
  const declared = (fn.options.methods ?? ['POST']).filter((method) => method !== 'HEAD')
  return declared.length > 0 ? declared : ['POST']
}

/** The verbs a function's operations are documented with, in the order it declares them. */
export function documentedVerbs (fn: DeclaredFunction): HttpMethod[] {
  if (fn.prefix === undefined) return functionsPathMethods(fn)
  const declared = fn.options.methods ?? ['POST']
  // A GET route answers HEAD too, and is shown as its GET alone.
  return declared.includes('GET') ? declared.filter((method) => method !== 'HEAD') : [...declared]
}

function shown (fn: DeclaredFunction, url: string, methods: string[]): boolean {
  if (fn.prefix !== undefined) return url.endsWith(`/${fn.prefix}/${fn.name}`)
  return methods.every((method) => (functionsPathMethods(fn) as string[]).includes(method))
}

function operationFields (fn: DeclaredFunction): DocSchema {
  const { description, swagger = {} } = fn.options
  const fields: DocSchema = {
    tags: swagger.tags ?? [fn.prefix ?? 'functions'],
    security: functionSecurity(fn.options),
    [FUNCTION_EXTENSION]: fn.name
  }
  // Without words of its own, the method name in words: every operation has a summary to list it by.
  const summary = swagger.summary ?? description
  fields.summary = summary ?? inWords(fn.name)
  const details = [swagger.description ?? (description !== summary ? description : undefined), rolesNote(fn)].filter(Boolean)
  if (details.length > 0) fields.description = details.join('\n\n')
  if (swagger.responses) fields.response = swagger.responses
  if (swagger.deprecated === true) fields.deprecated = true
  return fields
}

function rolesNote (fn: DeclaredFunction): string | undefined {
  const roles = fn.options.requireRoles ?? []
  if (roles.length === 0) return undefined
  const which = roles.length === 1 ? 'the role' : fn.options.requireAllRoles ? 'every one of the roles' : 'one of the roles'
  return `Requires ${which} ${roles.join(', ')}.`
}

/** getDocsOrder → "Get docs order". */
function inWords (name: string): string {
  const words = name.split(/(?<=[a-z0-9])(?=[A-Z])|_+/).filter(Boolean).map((word) => word.toLowerCase())
  const text = words.join(' ')
  return text.charAt(0).toUpperCase() + text.slice(1)
}
