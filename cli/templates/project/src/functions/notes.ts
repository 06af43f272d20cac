// The Note resource: the five endpoints the generator creates for every resource.
import Parse from 'parse/node'
import { asCaller, CloudFunction, implementACL, MAX_QUERY_LIMIT, queryRows, requireUser, Route, Type, type CloudRequest, type Static } from 'fastify-parse-kit'
import { Note, NOTE_STATUSES } from '../models/Note.js'

const noteFields = {
  title: { type: String, description: 'Headline, at most 200 characters' },
  body: { type: String },
  status: { type: String, options: NOTE_STATUSES }
}

/** What the endpoints answer (`returns`): fields not listed here are not sent, and the API docs show it. */
const NoteJSON = Type.Object({
  objectId: Type.String(),
  title: Type.String(),
  body: Type.Optional(Type.String()),
  status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('published')])),
  slug: Type.String(),
  views: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' })
})
const NoteList = Type.Object({ results: Type.Array(NoteJSON), count: Type.Integer() })
const Deleted = Type.Object({ id: Type.String(), deleted: Type.Boolean() })

@Route(Note)
export class NoteFunctions {
  @CloudFunction({
    methods: ['POST'],
    requiresAuth: true,
    description: 'Creates a note owned by the caller; published notes are public.',
    returns: NoteJSON,
    validation: { fields: { ...noteFields, title: { ...noteFields.title, required: true } } }
  })
  static async createNote (request: CloudRequest) {
    // requiresAuth lets the master key through without a user; a note needs an owner, so that caller gets 119.
    const author = requireUser(request)
    const note = Note.fromParams(request.params)
    note.views = 0 // server-owned: a client value is discarded
    note.setACL(noteACL(author, note.status === 'published'))
    return note.save(null, asCaller(request))
  }

  @CloudFunction({
    methods: ['GET'],
    description: 'Notes the caller may read, newest first.',
    returns: NoteList,
    validation: { fields: { limit: { type: Number }, status: { type: String, options: NOTE_STATUSES } } }
  })
  static async listNotes (request: CloudRequest) {
    const query = new Parse.Query(Note).descending('createdAt')
    if (request.params.status) query.equalTo('status', request.params.status)
    const limit = Math.min(Math.max(Number(request.params.limit ?? 100), 0), MAX_QUERY_LIMIT)
    // Rows and count in one in-process query, as plain JSON (no Parse.Object round trip).
    return queryRows<Static<typeof NoteJSON>>(query.limit(limit), request, { count: true })
  }

  @CloudFunction({ methods: ['GET'], description: 'One note by id; 101 when it does not exist or the caller may not read it.', returns: NoteJSON, validation: { fields: { id: { type: String, required: true } } } })
  static async getNote (request: CloudRequest) {
    return new Parse.Query(Note).get(request.params.id, asCaller(request))
  }

  @CloudFunction({
    methods: ['POST'],
    requiresAuth: true,
    description: 'Changes a note the caller may write.',
    returns: NoteJSON,
    validation: { fields: { id: { type: String, required: true }, ...noteFields } }
  })
  static async updateNote (request: CloudRequest) {
    const note = await new Parse.Query(Note).get(request.params.id, asCaller(request))
    const changes = Note.fromParams(request.params)
    for (const field of ['title', 'body', 'status'] as const) {
      if (changes.has(field)) note.set(field, changes.get(field))
    }
    if (changes.has('status')) note.setACL(noteACL(request.user, note.status === 'published', note.getACL()))
    return note.save(null, asCaller(request))
  }

  @CloudFunction({ methods: ['POST'], requiresAuth: true, description: 'Deletes a note the caller may write.', returns: Deleted, validation: { fields: { id: { type: String, required: true } } } })
  static async deleteNote (request: CloudRequest) {
    const note = await new Parse.Query(Note).get(request.params.id, asCaller(request))
    await note.destroy(asCaller(request))
    return { id: note.id!, deleted: true }
  }
}

/** The author reads and writes; everyone reads once published. An existing ACL keeps its other entries. */
function noteACL (author: Parse.User | undefined, published: boolean, existing?: Parse.ACL | null): Parse.ACL {
  // With the master key and no ACL stored, the note gets no owner entry: only the master key writes it.
  const acl = existing ?? implementACL({ owner: author ? [{ user: author, read: true, write: true }] : [] })
  acl.setPublicReadAccess(published)
  acl.setPublicWriteAccess(false)
  return acl
}
