// The {{Name}} resource: five endpoints under {mount}/{{prefix}}/ (the route prefix
// comes from the class: @Route({{Name}}) → "{{prefix}}"; a method's name is its path).
import Parse from 'parse/node'
import { asCaller, clampLimit, CloudFunction, createRow, implementACL, queryRows, requireUser, Route, Type, type CloudRequest, type Static } from '{{kit}}'
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
const {{Name}}List = Type.Object({ results: Type.Array({{Name}}JSON), count: Type.Integer() })
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
    description: '{{pluralName}} the caller may read, newest first; filter by name.',
    returns: {{Name}}List,
    validation: { fields: { limit: { type: Number }, name: { type: String } } }
  })
  static async {{listMethod}} (request: CloudRequest<{ limit?: number, name?: string }>) {
    // Declared query-string fields arrive validated and converted (limit is a number).
    const query = new Parse.Query({{Name}}).descending('createdAt')
    if (request.params.name) query.equalTo('name', request.params.name)
    const limit = clampLimit(request.params.limit) // 100 when absent, at most MAX_QUERY_LIMIT
    // Rows and count in one in-process query, as plain JSON (no Parse.Object round trip).
    return queryRows<Static<typeof {{Name}}JSON>>(query.limit(limit), request, { count: true })
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
