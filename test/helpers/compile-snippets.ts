// Type-checks snippets of TypeScript as users write them, importing
// 'fastify-parse-kit' (→ lib/index.ts) and 'fastify-parse-kit/plugin'
// (→ plugin.ts): all in one program with the kit's own compiler settings, the
// snippets held in memory as if they lived in the checkout (so 'fastify',
// 'parse/node' … resolve from its node_modules). Each error is located in the
// snippet's own file and line.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const snippetDir = path.join(root, '.snippets')

export interface Snippet {
  /** Where the snippet comes from, e.g. docs/guides/models.md. */
  file: string
  /** 1-based line of the snippet's first line in that file. */
  line: number
  code: string
  /** Where the snippet lives among the others (e.g. models/Gadget.ts, for relative imports); a name of its own otherwise. */
  path?: string
}

export interface SnippetError {
  /** file:line, or the program file when the error is not in a snippet. */
  where: string
  /** TS<code>: the compiler's message. */
  message: string
}

/**
 * The kit's and node_modules' files parsed once per process: a second program (the browser blocks',
 * other options) reuses them, as TypeScript's language service does (keyed by how a file is read).
 * A second program cost 1.1 CPU-s, 0.15 with them.
 */
const parsed = new Map<string, ts.SourceFile>()

/** `overrides`: compiler options over the kit's own (a browser page's snippets compile as a bundler sees them). */
export function compileSnippets (snippets: Snippet[], overrides: ts.CompilerOptions = {}): SnippetError[] {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root)
  Object.assign(options, {
    noEmit: true,
    declaration: false,
    sourceMap: false,
    paths: {
      'fastify-parse-kit': [path.join(root, 'lib/index.ts')],
      'fastify-parse-kit/plugin': [path.join(root, 'plugin.ts')]
    },
    ...overrides
  })
  const virtual = new Map<string, { snippet: Snippet, text: string }>()
  snippets.forEach((snippet, index) => {
    const name = snippet.path ?? `${snippet.file.replace(/[^a-z0-9]+/gi, '-')}-line-${snippet.line}-${index}.mts`
    // `export {}` keeps a snippet without imports a module, so snippets never share a scope.
    virtual.set(path.join(snippetDir, name), { snippet, text: `${snippet.code}\nexport {}\n` })
  })
  const host = ts.createCompilerHost(options)
  const { fileExists, readFile, getSourceFile } = host
  const virtualDirs = new Set([...virtual.keys()].flatMap((file) => {
    const dirs: string[] = []
    for (let dir = path.dirname(file); dir.startsWith(snippetDir); dir = path.dirname(dir)) dirs.push(dir)
    return dirs
  }))
  host.directoryExists = (dir) => virtualDirs.has(dir) || ts.sys.directoryExists(dir)
  host.fileExists = (file) => virtual.has(file) || fileExists.call(host, file)
  host.readFile = (file) => virtual.get(file)?.text ?? readFile.call(host, file)
  host.getSourceFile = (file, language, ...rest) => {
    const entry = virtual.get(file)
    if (entry) return ts.createSourceFile(file, entry.text, language)
    const key = typeof language === 'object' ? `${file}|${language.languageVersion}|${language.impliedNodeFormat}` : `${file}|${language}`
    let source = parsed.get(key)
    if (source === undefined) {
      source = getSourceFile.call(host, file, language, ...rest)
      if (source !== undefined) parsed.set(key, source)
    }
    return source
  }
  // The kit's ambient declarations (Parse Server's modules) are roots of its own program too.
  const ambient = ts.sys.readDirectory(path.join(root, 'lib'), ['.d.ts'])
  const program = ts.createProgram([...ambient, ...virtual.keys()], options, host)
  const errors: SnippetError[] = []
  // Semantic checks for the snippets only: the checker then types just the part of the kit they
  // reach (a full check of lib/ is `npm run typecheck`'s job, with the same tsconfig.json, and
  // cost most of this file's seconds). Option, global and syntax errors still cover the program.
  const diagnostics = [
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(),
    ...[...virtual.keys()].flatMap((file) => program.getSemanticDiagnostics(program.getSourceFile(file)))
  ]
  for (const diagnostic of diagnostics) {
    const entry = diagnostic.file && virtual.get(diagnostic.file.fileName)
    const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`
    if (!entry || diagnostic.start === undefined) {
      errors.push({ where: diagnostic.file?.fileName ?? '(program)', message })
      continue
    }
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start)
    errors.push({ where: `${entry.snippet.file}:${entry.snippet.line + line}`, message })
  }
  return errors
}
