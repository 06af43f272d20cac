// A field's `pattern` is a JavaScript regular expression; PostgreSQL's CHECK
// constraint reads it in its own dialect (ARE), where some escapes mean other
// things: `\b` is a backspace there (a word boundary is `\y`), `\d` may match
// digits of other scripts, `.` matches a newline. Each construct is rewritten
// to mean in PostgreSQL what it means in JavaScript; the few that have no
// faithful rewrite are refused when the model is imported, naming the construct.

export interface PostgresRegex {
  /** The expression, anchored to the whole value. */
  source: string
  /** The `i` flag: checked with `~*`. */
  caseInsensitive: boolean
}

/** A construct of the pattern with no PostgreSQL form. */
export class UnsupportedPatternError extends Error {}

/** Flags with no effect on a whole-value test, or one PostgreSQL has (`i`). */
const ACCEPTED_FLAGS = new Set(['i', 'g'])

const DIGIT = '0-9'
const WORD = 'A-Za-z0-9_'
/** What JavaScript's `.` leaves out (without the `s` flag). */
const NOT_LINE_END = '[^\\n\\r\\u2028\\u2029]'

/** The PostgreSQL form of a pattern, or UnsupportedPatternError naming what cannot be translated. */
export function postgresRegex (pattern: string | RegExp): PostgresRegex {
  const source = typeof pattern === 'string' ? pattern : pattern.source
  const flags = typeof pattern === 'string' ? '' : pattern.flags
  for (const flag of flags) {
    if (!ACCEPTED_FLAGS.has(flag)) throw new UnsupportedPatternError(`the ${flag} flag (only i is supported)`)
  }
  return { source: `^(?:${translate(source)})$`, caseInsensitive: flags.includes('i') }
}

function translate (source: string): string {
  let out = ''
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const char = source[i]
    if (char === '\\') {
      const [text, used] = escape(source, i + 1, inClass)
      out += text
      i += used
      continue
    }
    if (inClass) {
      if (char === ']') inClass = false
      // `[:`, `[.` and `[=` open PostgreSQL's named classes: a `[` in a class is only a `[`.
      out += char === '[' ? '\\[' : char
      continue
    }
    if (char === '[') {
      const negated = source[i + 1] === '^'
      if (source[i + (negated ? 2 : 1)] === ']') throw new UnsupportedPatternError(negated ? 'the class [^] (any character)' : 'the empty class []')
      inClass = true
      out += negated ? '[^' : '['
      if (negated) i++
      continue
    }
    if (char === '(' && source[i + 1] === '?') {
      const group = source.slice(i, i + 4)
      if (group.startsWith('(?:')) { out += '(?:'; i += 2; continue }
      if (group.startsWith('(?=') || group.startsWith('(?!')) throw new UnsupportedPatternError(`a lookahead ${group.slice(0, 3)}…)`)
      if (group === '(?<=' || group === '(?<!') throw new UnsupportedPatternError(`a lookbehind ${group}…)`)
      if (group.startsWith('(?<')) throw new UnsupportedPatternError('a named group (?<name>…)')
      throw new UnsupportedPatternError(`the group ${group}`)
    }
    out += char === '.' ? NOT_LINE_END : char
  }
  return out
}

/** One escape (what follows the backslash at `at`): its PostgreSQL text and the characters it used. */
function escape (source: string, at: number, inClass: boolean): [string, number] {
  const char = source[at]
  if (char === undefined) return ['\\\\', 0]
  const hex = (count: number) => /^[0-9A-Fa-f]+$/.test(source.slice(at + 1, at + 1 + count)) && source.slice(at + 1, at + 1 + count).length === count
  switch (char) {
    case 'b': return [inClass ? '\\b' : '\\y', 1] // a backspace in a class in both dialects; a word boundary outside
    case 'B': return [inClass ? 'B' : '\\Y', 1]
    case 'd': return [inClass ? DIGIT : `[${DIGIT}]`, 1]
    case 'w': return [inClass ? WORD : `[${WORD}]`, 1]
    case 'D':
    case 'W':
    case 'S':
      if (inClass) throw new UnsupportedPatternError(`\\${char} inside a character class`)
      return [char === 'S' ? '\\S' : `[^${char === 'D' ? DIGIT : WORD}]`, 1]
    case 's': case 'n': case 'r': case 't': case 'v': case 'f': return [`\\${char}`, 1]
    case '0': return ['\\u0000', 1]
    // PostgreSQL's \x reads every hex digit that follows: JavaScript's reads two.
    case 'x': return hex(2) ? [`\\u00${source.slice(at + 1, at + 3)}`, 3] : ['x', 1]
    case 'u': return hex(4) ? [`\\u${source.slice(at + 1, at + 5)}`, 5] : ['u', 1]
    case 'c': return /[A-Za-z]/.test(source[at + 1] ?? '') ? [`\\c${source[at + 1]}`, 2] : ['\\\\c', 1]
    case 'k': if (source[at + 1] === '<') throw new UnsupportedPatternError('a named backreference (\\k<name>)'); return ['k', 1]
    default:
      if (/[1-9]/.test(char)) throw new UnsupportedPatternError(`a backreference (\\${char})`)
      // JavaScript reads any other escaped letter as the letter; PostgreSQL would read some as escapes.
      if (/[A-Za-z]/.test(char)) return [char, 1]
      return [`\\${char}`, 1]
  }
}
