// Parse's rules for class and field names, restated so that declaring a model
// (a decorator runs them) does not load Parse Server. The rules are Parse's
// (SchemaController.classNameIsValid, fieldNameIsValid, systemClasses);
// test/parse-contract.test.ts checks that these answer as Parse does, so a
// Parse upgrade that changes one fails there.

/** Parse's own classes that an application may declare, in Parse's order. */
const SYSTEM_CLASSES: readonly string[] = Object.freeze(['_User', '_Installation', '_Role', '_Session', '_Product', '_PushStatus', '_JobStatus', '_JobSchedule', '_Audience', '_Idempotency'])

/** A letter, then letters, digits and _. */
const PLAIN_NAME = /^[A-Za-z][A-Za-z0-9_]*$/
/** The join tables Parse keeps for relations (`_Join:field:Class`). */
const JOIN_TABLE = /^_Join:[A-Za-z0-9_]+:[A-Za-z0-9_]+/
/** Names Parse refuses although they are plain (they clash with properties of its objects). */
const REFUSED_NAMES = new Set(['length'])

/** Parse's rule for a class name: one of Parse's own classes, a join table, or a plain name. */
export function parseAcceptsClassName (name: string): boolean {
  return SYSTEM_CLASSES.includes(name) || JOIN_TABLE.test(name) || parseAcceptsFieldName(name, name)
}

/** Parse's rule for a field name, of `className` when given (`className` itself is a field name only on Parse's _Hooks). */
export function parseAcceptsFieldName (name: string, className?: string): boolean {
  if (className !== undefined && className !== '' && className !== '_Hooks' && name === 'className') return false
  return PLAIN_NAME.test(name) && !REFUSED_NAMES.has(name)
}

/** Parse's own classes (`_User`, `_Role`, …), in Parse's order. */
export function parseSystemClasses (): readonly string[] {
  return SYSTEM_CLASSES
}
