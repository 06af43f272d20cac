// What the Parse SDK sends when it saves an object is built by the private
// Parse.Object#_getSaveJSON. A versioned model adds its version field there
// (model/base-model.ts), so that every save path of the SDK (save, saveAll,
// batches) carries it.
import Parse from 'parse/node'

type SaveJSON = (this: Parse.Object) => Parse.Attributes

/** Every save of an instance of `Class` (and its subclasses) sends what `extend` adds to the SDK's own save JSON. */
export function extendSaveJSON (Class: abstract new (...args: never[]) => Parse.Object, extend: (object: Parse.Object, json: Parse.Attributes) => void): void {
  const prototype = Class.prototype as unknown as { _getSaveJSON: SaveJSON }
  const inherited = (Object.getPrototypeOf(prototype) as { _getSaveJSON: SaveJSON })._getSaveJSON
  prototype._getSaveJSON = function (this: Parse.Object) {
    const json = inherited.call(this)
    extend(this, json)
    return json
  }
}
