import { DecoratorsConfigError } from '../errors.js'

// The kit's decorators are TypeScript's legacy ("experimental") decorators.
// Called as standard (TC39) decorators they receive a context object instead
// of a target and key; we refuse that loudly instead of misbehaving.
export function assertLegacyDecorator (decorator: string, secondArgument: unknown): void {
  if (typeof secondArgument === 'object' && secondArgument !== null && 'kind' in secondArgument) {
    throw new DecoratorsConfigError(
      `${decorator} is a legacy decorator, but it was called as a standard (TC39) decorator. ` +
      'Set "experimentalDecorators": true (and "useDefineForClassFields": false) in tsconfig.json.'
    )
  }
}
