import Parse from 'parse/node'
import { BaseModel, BeforeSave, ParseClass, ParseField, validateOrThrow } from 'fastify-parse-kit'

export const NOTE_STATUSES = ['draft', 'published'] as const

@ParseClass('Note', { description: 'A short text; public once published, otherwise only its author reads it' })
export class Note extends BaseModel {
  @ParseField({ type: 'String', required: true, maxLength: 200, description: 'Headline' }) declare title: string
  @ParseField({ type: 'String', maxLength: 10_000 }) declare body: string
  @ParseField({ type: 'String', enum: NOTE_STATUSES, default: 'draft' }) declare status: typeof NOTE_STATUSES[number]
  @ParseField({ type: 'String', unique: true, description: 'Derived from the title when the note is first saved' }) declare slug: string
  @ParseField({ type: 'Number', default: 0, min: 0, integer: true }) declare views: number

  @BeforeSave()
  static async beforeSave (request: Parse.Cloud.BeforeSaveRequest<Note>) {
    const note = request.object
    // Server-owned: derived once, never taken from a client (seeds, with the master key, may set it).
    if (!request.original && !(request.master && note.slug)) note.slug = slugify(note.title ?? '')
    validateOrThrow(note)
  }
}

/** "Hello, World!" → "hello-world", plus a short suffix so two equal titles stay unique. */
export function slugify (title: string): string {
  const base = title.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'note'
  return `${base}-${Math.random().toString(36).slice(2, 8)}`
}
