// The N generated functions a scale boot declares (decorated classes, ten
// functions to a class, each class under its own @Route prefix), shared by the
// whole boot (scale.ts) and the registration measured alone (register-alone.ts).
// It loads the kit's decorators: bare-routes.ts, the baseline, must not import it.
import { CloudFunction, Route, type CloudRequest } from '../../lib/index.js'
import { generatedFunctions } from './generated-functions.js'

/** N handler methods, ten to a class, each class under its own @Route prefix, with validated fields like a real resource. */
export function declareGeneratedFunctions (n: number): Array<abstract new () => unknown> {
  const classes = new Map<string, abstract new () => unknown>()
  for (const { index: i, name, prefix, methods } of generatedFunctions(n)) {
    let Generated = classes.get(prefix)
    if (!Generated) {
      Generated = class {}
      Object.defineProperty(Generated, 'name', { value: `GeneratedFunctions${classes.size}` })
      classes.set(prefix, Generated)
    }
    Object.defineProperty(Generated, name, {
      value: (request: CloudRequest) => ({ function: name, params: request.params }),
      writable: true,
      configurable: true
    })
    CloudFunction({
      methods,
      description: `Generated function ${i}`,
      requiresAuth: i % 4 === 0,
      validation: {
        fields: {
          title: { type: String, required: i % 2 === 0, description: 'A title' },
          count: { type: Number },
          status: { type: String, options: ['draft', 'published'] }
        }
      }
    })(Generated, name, Object.getOwnPropertyDescriptor(Generated, name)!)
  }
  for (const [prefix, Generated] of classes) Route(prefix)(Generated)
  return [...classes.values()]
}
