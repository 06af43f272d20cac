// How long a declared class or field name may be. PostgreSQL keeps the first
// 63 bytes of a table's or column's name and drops the rest without a word,
// so two names alike that far would share one table or one column (a save of
// one class then writes into the other's columns). Declared names are ASCII
// (letters, digits, _), so 63 characters are 63 bytes; the bound holds on
// every database, so that a model moves between them unchanged.
export const MAX_NAME_LENGTH = 63

/** Why a declared name is too long, or undefined when it fits. */
export function nameTooLong (kind: 'class' | 'field', name: string): string | undefined {
  if (name.length <= MAX_NAME_LENGTH) return undefined
  const holder = kind === 'class' ? 'table' : 'column'
  return `the ${kind} name "${name}" is ${name.length} characters, more than ${MAX_NAME_LENGTH}: PostgreSQL keeps only the first ${MAX_NAME_LENGTH} of a ${holder}'s name, so two names alike that far would share one ${holder}. Shorten it`
}
