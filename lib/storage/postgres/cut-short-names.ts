// Before the kit shortened long names itself, PostgreSQL cut them at 63 bytes.
// An index or CHECK an older kit made under such a cut-short name is the same
// object the kit wants now: it is renamed to the kit's name, not built again.
import type { FoundObject, WantedObject } from '../indexes/reconcile.js'
import { PG_NAME_BYTES, leadingBytes } from './identifiers.js'

export interface CutShortRename {
  className: string
  /** The name PostgreSQL kept. */
  from: string
  /** The name the kit gives it now. */
  to: string
}

/** `declared`: each wanted object's name before the kit shortened it. */
export function cutShortRenames (found: FoundObject[], wanted: Array<{ object: WantedObject, declared: string }>): CutShortRename[] {
  const key = (className: string, name: string) => `${className}\u0000${name}`
  const present = new Set(found.map((object) => key(object.className, object.name)))
  const renames: CutShortRename[] = []
  for (const { object, declared } of wanted) {
    if (Buffer.byteLength(declared) <= PG_NAME_BYTES || present.has(key(object.className, object.name))) continue
    const from = leadingBytes(declared, PG_NAME_BYTES)
    if (found.some((old) => old.madeByKit && old.className === object.className && old.name === from)) renames.push({ className: object.className, from, to: object.name })
  }
  return renames
}

/** The found objects as they are named once the renames are done. */
export function renamed<T extends FoundObject> (found: T[], renames: CutShortRename[]): T[] {
  return found.map((object) => {
    const rename = renames.find((r) => r.className === object.className && r.from === object.name)
    return rename ? { ...object, name: rename.to } : object
  })
}

/** Renames what an older kit made under a cut-short name; one that fails is left to the ordinary path (built anew, the old one dropped). */
export async function renameCutShort (renames: CutShortRename[], rename: (rename: CutShortRename) => Promise<unknown>): Promise<CutShortRename[]> {
  const done: CutShortRename[] = []
  for (const one of renames) {
    try {
      await rename(one)
      done.push(one)
    } catch {} // left under its old name: replaced like any other
  }
  return done
}

/** The note of a kept object that was renamed. */
export function renameNote (renames: CutShortRename[], change: { className: string, name: string }): string | undefined {
  const rename = renames.find((r) => r.className === change.className && r.to === change.name)
  return rename && `renamed from ${rename.from} (PostgreSQL had cut the name at 63 bytes)`
}
