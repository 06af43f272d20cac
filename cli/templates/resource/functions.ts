// The {{Name}} resource: five endpoints under {mount}/{{prefix}}/ (the route prefix
// comes from the class: @Route({{Name}}) → "{{prefix}}"; a method's name is its path).
import Parse from 'parse/node'
import { asCaller, CloudFunction, createRow, implementACL, pageOf, pageRows, pagingFields, requireUser, Route, Type, type CloudRequest, type Static } from '{{kit}}'
import { {{Name}} } from '{{modelImport}}'

/** The fields a client may send; the same list validates create and update and documents them. */
const {{camelName}}Fields = {
  name: { type: String, description: 'Display name, at most 200 characters' },
  description: { type: String }
}
const editable = Object.keys({{camelName}}Fields) as Array<keyof typeof {{camelName}}Fields>
/**
 * What a handler reads from those fields. Each handler's request type is checked
 * against its declaration when the project compiles: a misspelt or retyped param
 * fails with an error naming it (e.g. `params.nmae: not declared in validation.fields`).
 */
interface {{Name}}Edit { name?: string, description?: string }

/** What the endpoints answer (`returns`): fields not listed here are not sent, and the API docs show it. */
const {{Name}}JSON = Type.Object({
  objectId: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' })
})
/** A page of rows: `results`, `next` (pass it as `after` for the following page) and `count` with `countKind`. */
const {{Name}}List = pageOf({{Name}}JSON)
const Deleted = Type.Object({ id: Type.String(), deleted: Type.Boolean() })

@Route({{Name}})
export class {{Name}}Functions {
  @CloudFunction({
    methods: ['POST'],
    requiresAuth: true,
    description: 'Creates a {{Name}} owned by the caller; everyone may read it.',
    returns: {{Name}}JSON,
    validation: { fields: { ...{{camelName}}Fields, name: { ...{{camelName}}Fields.name, required: true } } }
  })
  static async {{createMethod}} (request: CloudRequest<{{Name}}Edit & { name: string }>) {
    // requiresAuth lets the master key through without a user; an owner is needed here, so that caller gets 119.
    const owner = requireUser(request)
    // Saved through Parse (permissions, triggers, defaults); answered as the stored row's JSON, no Parse.Object on the way.
    return createRow<Static<typeof {{Name}}JSON>>({{Name}}, { ...{{Name}}.fieldsFromParams(request.params), ACL: {{camelName}}ACL(owner) }, request)
  }

  @CloudFunction({
    methods: ['GET'],
    description: '{{pluralName}} the caller may read, newest first, a page at a time (pass `next` as `after`); filter by name. `count` is exact up to 1000, then `countKind` is `atLeast`.',
    returns: {{Name}}List,
    validation: { fields: { ...pagingFields, name: { type: String } } }
  })
  static async {{listMethod}} (request: CloudRequest<{ limit?: number, after?: string, name?: string }>) {
    // Declared query-string fields arrive validated and converted (limit is a number).
    const query = new Parse.Query({{Name}})
    if (request.params.name) query.equalTo('name', request.params.name)
    // Newest first by (createdAt, objectId), the indexes {{Name}} declares: the page after `after` costs
    // what the first page costs at any depth; skip, page and offset are refused (400) rather than ignored.
    // The count stops at 1000 ("1000+"): an exact one would read every row the caller may read.
    return pageRows<Static<typeof {{Name}}JSON>>(query, request, { limit: request.params.limit, count: { upTo: 1000 } })
  }

  @CloudFunction({
    methods: ['GET'],
    description: 'One {{Name}} by id; 101 when it does not exist or the caller may not read it.',
    returns: {{Name}}JSON,
    validation: { fields: { id: { type: String, required: true } } }
  })
  static async {{getMethod}} (request: CloudRequest<{ id: string }>) {
    return new Parse.Query({{Name}}).get(request.params.id, asCaller(request))
  }

  @CloudFunction({
    methods: ['POST'],
    requiresAuth: true,
    description: 'Changes a {{Name}} the caller may write.',
    returns: {{Name}}JSON,
    validation: { fields: { id: { type: String, required: true }, ...{{camelName}}Fields } }
  })
  static async {{updateMethod}} (request: CloudRequest<{{Name}}Edit & { id: string }>) {
    const {{variable}} = await new Parse.Query({{Name}}).get(request.params.id, asCaller(request))
    const changes = {{Name}}.fromParams(request.params)
    for (const field of editable) {
      if (changes.has(field)) {{variable}}.set(field, changes.get(field))
    }
    return {{variable}}.save(null, asCaller(request))
  }

  @CloudFunction({
    methods: ['POST'],
    requiresAuth: true,
    description: 'Deletes a {{Name}} the caller may write.',
    returns: Deleted,
    validation: { fields: { id: { type: String, required: true } } }
  })
  static async {{deleteMethod}} (request: CloudRequest<{ id: string }>) {
    const {{variable}} = await new Parse.Query({{Name}}).get(request.params.id, asCaller(request))
    await {{variable}}.destroy(asCaller(request))
    return { id: {{variable}}.id!, deleted: true }
  }
}

/** The creator reads and writes; everyone else reads. */
function {{camelName}}ACL (owner: Parse.User): Parse.ACL {
  return implementACL({ publicRead: true, owner: [{ user: owner, read: true, write: true }] })
}
