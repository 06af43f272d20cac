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
  const owners = new Map<string, DeclaredFunction>()
  // A @Route prefix's words, once per prefix (functions share their class's).
  const prefixWords = new Map<string, string>()
  for (const fn of functions) {
    const base = fn.options.swagger?.operationId ?? defaultId(fn, prefixWords)
    const verbs = documentedVerbs(fn).map((verb) => verb.toLowerCase())
    const byVerb = new Map<string, string>()
    for (const verb of verbs) {
      const id = verb === verbs[0] ? base : `${base}${capitalised(verb)}`
      const other = owners.get(id)
      if (other) {
        throw new RouteOptionInvalidError(`@CloudFunction ${fn.label}: its operationId "${id}" is also that of ${other.label} in the API document; ` +
          'give one of them another with swagger.operationId')
      }
      owners.set(id, fn)
      byVerb.set(verb, id)
    }
    ids.set(fn.name, byVerb)
  }
  return ids
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
