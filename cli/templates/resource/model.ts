import Parse from 'parse/node'
import { BaseModel, BeforeSave, ParseClass, ParseField, validateOrThrow } from '{{kit}}'

// Fields are declared with `declare name: string`, the intended form (`name!: string` works too:
// @ParseClass moves such a property into the object's attributes).
// Types: String, Number, Boolean, Date, Object, Array, GeoPoint, Pointer and Relation (with targetClass), File, Bytes, Polygon.
@ParseClass('{{Name}}', {
  description: '{{Name}} records',
  // The indexes the generated list reads: newest first, objectId breaking ties; the same after a name filter.
  compoundIndexes: [{ fields: ['createdAt', 'objectId'] }, { fields: ['name', 'createdAt', 'objectId'] }]
})
export class {{Name}} extends BaseModel {
  @ParseField({ type: 'String', required: true, maxLength: 200, description: 'Display name' }) declare name: string
  @ParseField({ type: 'String', maxLength: 10_000 }) declare description: string

  @BeforeSave()
  static async beforeSave (request: Parse.Cloud.BeforeSaveRequest<{{Name}}>) {
    // Runs before every save, on every path: derive fields here, then check the declared rules.
    validateOrThrow(request.object)
  }
}
