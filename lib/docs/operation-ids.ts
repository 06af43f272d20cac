// Each declared function's operationId, one per documented verb: the @Route
// prefix and the method name in camelCase (notes + createNote → notesCreateNote),
// the method name alone at /functions/{name}, or `swagger.operationId`. A
// function documented with several verbs keeps the id on the first verb it
// declares; the others add the verb (helloGet). Ids follow the declarations, so
// they stay the same from one build to the next; two that clash fail boot.
import { RouteOptionInvalidError } from '../errors.js'
import type { DeclaredFunction } from '../routing/registry.js'
import { documentedVerbs } from './operations.js'

/** operationId by function name, then by lower-case verb. */
export type OperationIds = Map<string, Map<string, string>>

export function operationIds (functions: DeclaredFunction[]): OperationIds {
  const ids: OperationIds = new Map()
  let byVerb = new Map<string, string>()
  eachOperationId(functions, (fn) => { ids.set(fn.name, byVerb = new Map()) }, (verb, id) => { byVerb.set(verb, id) })
  return ids
}

/**
 * The boot's check: fails as operationIds does when two functions share an id, without
 * building the document's map (a Map per function, a thousand of them at boot).
 */
export function checkOperationIds (functions: DeclaredFunction[]): void {
  eachOperationId(functions, () => {}, () => {})
}

/** Every function's ids, verb by verb in declaration order; throws on the first id two functions share. */
function eachOperationId (functions: DeclaredFunction[], onFunction: (fn: DeclaredFunction) => void, onId: (verb: string, id: string) => void): void {
  const owners = new Map<string, DeclaredFunction>()
  // A @Route prefix's words, once per prefix (functions share their class's).
  const prefixWords = new Map<string, string>()
  for (const fn of functions) {
    onFunction(fn)
    const base = fn.options.swagger?.operationId ?? defaultId(fn, prefixWords)
    const verbs = documentedVerbs(fn)
    for (let i = 0; i < verbs.length; i++) {
      const verb = verbs[i].toLowerCase()
      const id = i === 0 || verbs[i] === verbs[0] ? base : `${base}${capitalised(verb)}`
      const other = owners.get(id)
      if (other) {
        throw new RouteOptionInvalidError(`@CloudFunction ${fn.label}: its operationId "${id}" is also that of ${other.label} in the API document; ` +
          'give one of them another with swagger.operationId')
      }
      owners.set(id, fn)
      onId(verb, id)
    }
  }
}

function defaultId (fn: DeclaredFunction, prefixWords: Map<string, string>): string {
  if (fn.prefix === undefined) return fn.name
  let words = prefixWords.get(fn.prefix)
  if (words === undefined) {
    words = fn.prefix.split(/[^A-Za-z0-9]+/).filter(Boolean).map((word, i) => i === 0 ? word : capitalised(word)).join('')
    prefixWords.set(fn.prefix, words)
  }
  return words + capitalised(fn.name)
}

function capitalised (word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1)
}
