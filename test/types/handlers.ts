// Type tests, compiled by `npm run typecheck` (the first step of `npm test`).
// Each @ts-expect-error marks a line the compiler must refuse: if the typing
// stopped catching it, the directive would be unused and compilation fails.
// Nothing here runs.
import Parse from 'parse/node'
import { CloudFunction, Type, ProtectedCloudFunction, type AuthenticatedRequest, type CloudRequest, type RequestOf } from '../../lib/index.js'

const getOptions = {
  methods: ['GET'],
  validation: { fields: { id: { type: String, required: true }, limit: { type: Number }, status: { type: String, options: ['draft', 'published'] } } }
} as const

const NoteAnswer = Type.Object({ objectId: Type.String(), title: Type.String() })

const listOptions = {
  validation: { fields: { tags: { type: Array, items: String, required: true }, when: { type: Array, items: Date }, loose: { type: Array } } }
} as const

export class TypedHandlers {
  // Params come from validation.fields: required ones are present, others optional, options become a union.
  @CloudFunction(getOptions)
  static read (request: RequestOf<typeof getOptions>) {
    const id: string = request.params.id
    const limit: number | undefined = request.params.limit
    const status: 'draft' | 'published' | undefined = request.params.status
    // @ts-expect-error an undeclared param is not readable
    void request.params.other
    // @ts-expect-error limit is a number, not text
    const text: string = request.params.limit
    // @ts-expect-error without requiresAuth there may be no user
    const user: Parse.User = request.user
    return { id, limit, status, text, user }
  }

  // An Array field's `items` types its elements (dates in a list stay ISO text).
  @CloudFunction(listOptions)
  static lists (request: RequestOf<typeof listOptions>) {
    const tags: string[] = request.params.tags
    const when: string[] | undefined = request.params.when
    const loose: unknown[] | undefined = request.params.loose
    // @ts-expect-error the elements of a list of String are text
    const counts: number[] = request.params.tags
    return { tags, when, loose, counts }
  }

  // The inline form: the params written out are checked against the declaration.
  @CloudFunction({ validation: { fields: { id: { type: String, required: true } } } })
  static inline (request: CloudRequest<{ id: string }>) {
    return request.params.id
  }

  // @ts-expect-error a param typed differently from its field
  @CloudFunction({ validation: { fields: { id: { type: String, required: true } } } })
  static wrongType (request: CloudRequest<{ id: number }>) {
    return request.params.id
  }

  // @ts-expect-error a param the declaration does not have
  @CloudFunction({ validation: { fields: { id: { type: String, required: true } } } })
  static undeclared (request: CloudRequest<{ id: string, extra: string }>) {
    return request.params.extra
  }

  // @ts-expect-error an optional field read as always present
  @CloudFunction({ validation: { fields: { id: { type: String } } } })
  static optionalAsRequired (request: CloudRequest<{ id: string }>) {
    return request.params.id
  }

  // A default makes the field present.
  @CloudFunction({ validation: { fields: { page: { type: Number, default: 1 } } } })
  static withDefault (request: CloudRequest<{ page: number }>) {
    return request.params.page
  }

  // Untyped CloudRequest stays accepted (params left as they were).
  @CloudFunction({ validation: { fields: { id: { type: String, required: true } } } })
  static untyped (request: CloudRequest) {
    return request.params.anything
  }

  // requiresAuth: a user unless the master key was presented.
  @CloudFunction({ requiresAuth: true })
  static authenticated (request: AuthenticatedRequest) {
    if (!request.master) return request.user.id
    // @ts-expect-error a master-key caller may have no user
    return request.user.id
  }

  // @ts-expect-error claiming a user the declaration does not guarantee
  @CloudFunction({})
  static claimsUser (request: AuthenticatedRequest) {
    return request.master
  }

  @ProtectedCloudFunction({ validation: { fields: { title: { type: String, required: true } } } })
  static protectedOne (request: AuthenticatedRequest<{ title: string }>) {
    return request.master ? request.params.title : request.user.getUsername()
  }

  @CloudFunction({ requireRoles: ['Admin'] })
  static roles (request: AuthenticatedRequest) {
    return request.master || request.user.id
  }

  // Answers are checked against `returns`.
  @CloudFunction({ returns: NoteAnswer })
  static async answers () {
    return { objectId: 'a', title: 'b' }
  }

  // @ts-expect-error the answer lacks a field `returns` requires
  @CloudFunction({ returns: NoteAnswer })
  static async missingField () {
    return { objectId: 'a' }
  }

  // @ts-expect-error the answer has a field of the wrong type
  @CloudFunction({ returns: NoteAnswer })
  static wrongField () {
    return { objectId: 1, title: 'b' }
  }

  // `returns` in the validation shorthand.
  @CloudFunction({ returns: { id: { type: String, required: true }, deleted: { type: Boolean, required: true } } })
  static shorthand () {
    return { id: 'x', deleted: true }
  }

  // @ts-expect-error shorthand `returns`, wrong answer
  @CloudFunction({ returns: { id: { type: String, required: true } } })
  static shorthandWrong () {
    return { id: 3 }
  }

  // A Parse.Object answers through its toJSON().
  @CloudFunction({ returns: NoteAnswer })
  static async parseObject () {
    return new Parse.Object('Note')
  }
}
