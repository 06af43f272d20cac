// The indexes Parse's session and login paths need and Parse Server makes none
// of: every request whose token misses the session cache looks its _Session row
// up by token, and logout, password changes and the expired-session sweep find
// sessions by user. Planned on every boot whatever the models declare, so they
// are never dropped as "no longer declared".
import type { IndexSpec } from './plan.js'

export const SESSION_CLASS = '_Session'

export function sessionIndexes (): IndexSpec[] {
  return [
    // Unique as Parse means it; an existing database holding a duplicate token still gets a plain index.
    { className: SESSION_CLASS, name: '_Session_sessionToken_1_unique', kind: 'unique', fields: [{ name: 'sessionToken', type: 'String', direction: 1 }], unique: true, plainIfDuplicates: true },
    { className: SESSION_CLASS, name: '_Session_user_1', kind: 'ordered', fields: [{ name: 'user', type: 'Pointer', direction: 1 }] }
  ]
}

/** The plain index made instead of a unique one while the stored rows hold duplicates. */
export function plainFallbackName (spec: IndexSpec): string {
  return `${spec.className}_${spec.fields.map((field) => `${field.name}_${field.direction}`).join('_')}`
}
