// Fastify sets up a scope's validator and serializer compilers while it compiles
// the first route that needs one. Declared routes let Fastify compile that first
// route itself, and hand every later route a compiler that borrows the scope's.

export interface AfterFirstRoute<Compiler> {
  /** The compiler for the next route with a schema: undefined for the first one. */
  forRoute (): Compiler | undefined
}

export function afterFirstRoute<Compiler> (compiler: Compiler): AfterFirstRoute<Compiler> {
  let firstTaken = false
  return {
    forRoute () {
      if (firstTaken) return compiler
      firstTaken = true
      return undefined
    }
  }
}
