// Route prefixes: the kebab-case plural of a class name (Category → categories,
// Person → people, OrderLine → order-lines).
import pluralize from 'pluralize'
import { RouteDeclarationError } from '../errors.js'

export function kebabPlural (className: string): string {
  const words = className.replace(/^_+/, '').split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|[_\s-]+/).filter(Boolean)
  if (words.length === 0) throw new RouteDeclarationError(`Cannot derive a route prefix from "${className}"`)
  words[words.length - 1] = pluralize(words[words.length - 1])
  return words.map((word) => word.toLowerCase()).join('-')
}

const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*(\/[a-z0-9]+(-[a-z0-9]+)*)*$/

export function checkPrefix (prefix: string, where: string): string {
  if (!KEBAB.test(prefix)) throw new RouteDeclarationError(`${where}: route prefix "${prefix}" must be kebab-case (lowercase words joined by -), e.g. 'order-lines'`)
  if (prefix === 'functions' || prefix.startsWith('functions/')) throw new RouteDeclarationError(`${where}: route prefix "${prefix}" is reserved for {mount}/functions/{name}`)
  return prefix
}
