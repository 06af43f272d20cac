// Parse scans every write's data for its requestKeywordDenylist
// (Utils.checkProhibitedKeywords → Utils.objectContainsKeyValue) three times
// per create: before the beforeSave trigger, after it, and in the database
// controller. Its scan compiles a new RegExp for every key it meets, for every
// keyword: on a small create that is most of the scan's cost. This answers
// the same scan with each pattern compiled once.
//
// Same answers, same errors: the same walk (each reachable object or array once,
// keys in Object.keys order, stopping at the first match), the same match rule
// (a string against the pattern as a regular expression, anything by ===), a
// pattern compiled only when a string meets it (so a bad pattern throws
// where Parse's would). A pattern that is not a string (a RegExp may carry
// flags and a lastIndex) is compiled afresh, as Parse does.
// test/keyword-scan.test.ts compares it with Parse's own on many inputs;
// test/parse-contract.test.ts pins the Parse code it stands in for.
import { parseInternals } from './internals.js'
import { fastPathsOn } from './fast-path-switch.js'

type Scan = (object: unknown, key: unknown, value: unknown) => boolean

const INSTALLED = Symbol.for('fastify-parse-kit.keyword-scan')
/** Denylists are short and come from the server's options; this only bounds a misuse. */
const MOST_PATTERNS = 256
const compiled = new Map<string, RegExp>()

function regExpOf (pattern: unknown): RegExp {
  if (typeof pattern !== 'string') return new RegExp(pattern as string)
  let regExp = compiled.get(pattern)
  if (regExp === undefined) {
    regExp = new RegExp(pattern) // throws for a bad pattern, as Parse's scan does
    if (compiled.size < MOST_PATTERNS) compiled.set(pattern, regExp)
  }
  return regExp
}

function matches (candidate: unknown, pattern: unknown): boolean {
  return (typeof candidate === 'string' && regExpOf(pattern).test(candidate)) || candidate === pattern
}

function isWalked (value: unknown): boolean {
  const tag = Object.prototype.toString.call(value)
  return tag === '[object Object]' || tag === '[object Array]'
}

/** Whether `object`, deep, holds a key matching `key`, a value matching `value`, or a pair matching both (as Parse's objectContainsKeyValue). */
export const objectContainsKeyValue: Scan = (object, key, value) => {
  const stack: unknown[] = [object]
  const seen = new WeakSet<object>()
  while (stack.length > 0) {
    const current = stack.pop() as object
    if (seen.has(current)) continue
    seen.add(current)
    for (const name of Object.keys(current)) {
      const entry = (current as Record<string, unknown>)[name]
      if (key !== undefined && value === undefined) {
        if (matches(name, key)) return true
      } else if (key === undefined && value !== undefined) {
        if (matches(entry, value)) return true
      } else if (key !== undefined && value !== undefined) {
        if (matches(name, key) && matches(entry, value)) return true
      }
      if (isWalked(entry)) stack.push(entry)
    }
  }
  return false
}

let shipped: Scan | undefined

/** Parse's own scan, taken before installKeywordScan replaces it (Parse loads at the first call). */
function shippedScan (): Scan {
  shipped ??= parseInternals().ParseUtils.objectContainsKeyValue
  return shipped
}

/** Parse's scan as shipped (for the comparison test). */
export const parseObjectContainsKeyValue: Scan = (object, key, value) => shippedScan()(object, key, value)

/** What Parse's Utils calls once installed: the compiled-pattern scan, or Parse's own with fastPaths: false. */
export const installedScan: Scan = (object, key, value) => fastPathsOn() ? objectContainsKeyValue(object, key, value) : parseObjectContainsKeyValue(object, key, value)

/** Idempotent: every denylist scan of Parse in this process takes the compiled patterns. */
export function installKeywordScan (): void {
  const { ParseUtils } = parseInternals()
  const utils = ParseUtils as unknown as Record<symbol, unknown>
  if (utils[INSTALLED]) return
  shippedScan()
  ParseUtils.objectContainsKeyValue = installedScan
  utils[INSTALLED] = true
}
