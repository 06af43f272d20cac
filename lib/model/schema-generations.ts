// Which declaration is newer, when instances of two versions of the
// application boot on one database (a rolling deploy). The database keeps a
// history of the declarations it was reconciled to, one generation each, in
// the order they first booted (lib/storage/schema-generation.ts). Pure: the
// history is passed in.
//
// The rule: an explicit schema.version ranks first (higher is newer; an
// explicit version is newer than a history without one). Otherwise, and
// between equal versions, a fingerprint the history holds before its latest
// generation is an older declaration; one it never saw is newer; the latest
// one is current.

export interface GenerationRecord {
  generation: number
  fingerprint: string
  /** The application's schema.version, when it set one. */
  version?: number
  declaredAt: Date
}

export type Standing =
  /** The declarations are the latest recorded: reconcile as usual (a restart, a second instance). */
  | { kind: 'current', latest: GenerationRecord }
  /** Newer than the latest recorded (or nothing recorded yet): reconcile, then record a new generation. */
  | { kind: 'newer', latest?: GenerationRecord }
  /** Older than the latest recorded: change nothing. `matches` is this declaration's own generation, when recorded. */
  | { kind: 'behind', latest: GenerationRecord, matches?: GenerationRecord }

export function standingOf (history: GenerationRecord[], fingerprint: string, version?: number): Standing {
  const ordered = [...history].sort((a, b) => a.generation - b.generation)
  const latest = ordered.at(-1)
  if (!latest) return { kind: 'newer' }
  const matches = ordered.filter((record) => record.fingerprint === fingerprint).at(-1)
  if (version !== undefined && latest.version !== version) {
    if (latest.version === undefined || version > latest.version) return { kind: 'newer', latest }
    return { kind: 'behind', latest, matches }
  }
  if (latest.fingerprint === fingerprint) return { kind: 'current', latest }
  return matches ? { kind: 'behind', latest, matches } : { kind: 'newer', latest }
}

/** The boot line for a standing. */
export function describeStanding (standing: Standing, fingerprint: string, recorded?: number): string {
  const short = (value: string) => value.slice(0, 12)
  const at = (record: GenerationRecord) => `generation ${record.generation}${record.version !== undefined ? ` (schema.version ${record.version})` : ''} of ${record.declaredAt.toISOString()}`
  if (standing.kind === 'current') return `[schema] the declarations are ${at(standing.latest)} (${short(fingerprint)}), the latest recorded`
  if (standing.kind === 'newer') {
    return `[schema] the declarations (${short(fingerprint)}) are newer than ${standing.latest ? at(standing.latest) : 'any recorded'}: recorded as generation ${recorded ?? '?'}`
  }
  const mine = standing.matches ? `they are ${at(standing.matches)}` : 'their schema.version is lower'
  return `[schema] this instance is behind: the database was reconciled to ${at(standing.latest)} and ${mine}; ` +
    'this boot changes no field, permission, index or constraint (the newer declarations stay in force). Deploy the newer version here too.'
}
