// TypeScript without "experimentalDecorators" compiles the kit's decorators as
// standard ones; esbuild (under tsx) then refuses some of them while compiling
// a file, before any decorator runs. That failure, wherever the file was
// imported from, becomes FPK_ERR_DECORATORS_CONFIG naming the file.
import { DecoratorsConfigError } from './errors.js'

/** What TypeScript transforms (esbuild under tsx) say about decorators when experimentalDecorators is off. */
const STANDARD_DECORATOR_FAILURE = /Decorators are not valid here|decorators? (are|is) not (supported|enabled)|experimental decorators/i
/** esbuild names the file first: "/src/models/Note.ts:4:2: ERROR: Decorators are not valid here". */
const FAILED_FILE = /^(.+?):\d+:\d+: ERROR: /m

export function decoratorsConfigError (error: unknown, file?: string): InstanceType<typeof DecoratorsConfigError> | undefined {
  const message = String((error as Error | undefined)?.message ?? error)
  if (!STANDARD_DECORATOR_FAILURE.test(message)) return undefined
  const where = FAILED_FILE.exec(message)?.[1] ?? file ?? 'A model or handler file'
  return new DecoratorsConfigError(`${where} could not be compiled: the kit's decorators need "experimentalDecorators": true (and "useDefineForClassFields": false) in tsconfig.json compilerOptions.`)
}
