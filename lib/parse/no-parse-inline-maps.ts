// Parse Server's files each end with their whole source map inline: a base64
// `data:` URL that carries the map and the text of Parse's sources (which
// its package does not ship). V8 keeps every script's source and, apart,
// its sourceMappingURL; with --enable-source-maps Node also parses every
// map and keeps it. For the 140 files a kit loads that is about 5 MB of
// heap and 8 MB of RSS after boot (6–14 MB across seven measured boots),
// for stack frames inside Parse (docs/internals/benchmarks.md, "Where the
// memory goes").
//
// So the kit compiles Parse's files without that last comment: their code is
// the same, and a frame inside Parse names the file and line that ran
// (parse-server/lib/…, Babel's output of Parse's sources). Parse's files on
// disk are untouched, and every other file keeps its map.
import { Module, createRequire } from 'node:module'
import path from 'node:path'

/** Parse Server's compiled files (parse-server/lib/). */
const PARSE_LIB = path.dirname(createRequire(import.meta.url).resolve('parse-server')) + path.sep

const INLINE_MAP = '\n//# sourceMappingURL=data:'

/** Where the wrapper marks itself: on Module.prototype (process-wide, as the module loader is), so a second kit does not wrap twice. */
const WRAPPED = Symbol.for('fastify-parse-kit.no-parse-inline-maps')

type Compile = (this: Module, content: string, filename: string, ...rest: unknown[]) => unknown
type CompilingModule = { _compile: Compile, [WRAPPED]?: true }

/** The source without its inline source map when the file is Parse Server's; anything else unchanged. */
export function withoutParseInlineMap (content: string, filename: string): string {
  if (!filename.startsWith(PARSE_LIB)) return content
  const at = content.lastIndexOf(INLINE_MAP)
  return at === -1 ? content : content.slice(0, at + 1)
}

/** From now on, Parse Server's files compile without their inline source maps. Call before Parse loads: defer-modules.ts does. */
export function dropParseInlineMaps (): void {
  const prototype = Module.prototype as unknown as CompilingModule
  if (prototype[WRAPPED]) return
  const compile = prototype._compile
  prototype._compile = function (this: Module, content: string, filename: string, ...rest: unknown[]) {
    return compile.call(this, typeof content === 'string' ? withoutParseInlineMap(content, filename) : content, filename, ...rest)
  }
  prototype[WRAPPED] = true
}
