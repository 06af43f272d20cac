// `fpk ai [targets]`: instruction files that tell coding assistants this kit's
// rules and traps. One text, wrapped in each tool's file format.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { CliError, type Io } from '../context.js'
import { detectLayout, findProjectRoot, projectName } from '../project.js'
import { displayPath, renderTemplate, writeNewFiles, type OutputFile } from '../templates.js'

export interface Assistant {
  number: number
  key: string
  label: string
  /** Relative to the project root. */
  file: string
  /** Template under cli/templates/ai/ that wraps the shared rules ({{rules}}). */
  template: string
}

export const ASSISTANTS: readonly Assistant[] = [
  { number: 1, key: 'claude', label: 'Claude Code', file: 'CLAUDE.md', template: 'ai/claude.md' },
  { number: 2, key: 'cursor', label: 'Cursor', file: '.cursor/rules/fastify-parse-kit.mdc', template: 'ai/cursor.mdc' },
  { number: 3, key: 'copilot', label: 'GitHub Copilot', file: '.github/copilot-instructions.md', template: 'ai/copilot.md' },
  { number: 4, key: 'windsurf', label: 'Windsurf', file: '.windsurf/rules/fastify-parse-kit.md', template: 'ai/windsurf.md' },
  { number: 5, key: 'gemini', label: 'Gemini CLI', file: 'GEMINI.md', template: 'ai/gemini.md' },
  { number: 6, key: 'agents', label: 'AGENTS.md (cross-tool)', file: 'AGENTS.md', template: 'ai/agents.md' }
]

export const DEFAULT_ASSISTANTS = '6'

/** "1,6", "claude,agents", "none" or "0" → the assistants (none for "none"/"0"). */
export function parseAssistants (text: string): Assistant[] {
  const items = text.split(/[\s,]+/).map((item) => item.trim().toLowerCase()).filter(Boolean)
  if (items.length === 0) throw new CliError(`no assistant given: ${choicesText()}`)
  if (items.every((item) => item === '0' || item === 'none')) return []
  const chosen: Assistant[] = []
  for (const item of items) {
    if (item === '0' || item === 'none') throw new CliError(`"${item}" (none) cannot be combined with other assistants`)
    const found = ASSISTANTS.find((assistant) => String(assistant.number) === item || assistant.key === item)
    if (!found) throw new CliError(`unknown assistant "${item}": ${choicesText()}`)
    if (!chosen.includes(found)) chosen.push(found)
  }
  return chosen.sort((a, b) => a.number - b.number)
}

function choicesText (): string {
  return `use a comma list of ${ASSISTANTS.map((a) => `${a.number} (${a.key})`).join(', ')}, or 0 / none`
}

export function assistantMenu (): string {
  const rows = ASSISTANTS.map((a) => `  ${a.number}  ${a.label.padEnd(24)} ${a.file}`)
  return ['Assistant instruction files:', ...rows, '  0  none', ''].join('\n')
}

/** The explicit choice; else the default with -y or without a terminal; else a question. */
export async function chooseAssistants (io: Io, given: string | undefined, yes: boolean | undefined): Promise<Assistant[]> {
  if (given !== undefined) return parseAssistants(given)
  if (yes || !io.interactive) return parseAssistants(DEFAULT_ASSISTANTS)
  io.out(assistantMenu())
  for (;;) {
    const answer = (await io.ask(`Which ones (comma list) [${DEFAULT_ASSISTANTS}]: `)).trim()
    try {
      return parseAssistants(answer === '' ? DEFAULT_ASSISTANTS : answer)
    } catch (error) {
      io.err(`${(error as Error).message}\n`)
    }
  }
}

export interface RulesContext {
  projectName: string
  /** e.g. src/models */
  modelsDir: string
  functionsDir: string
}

export async function assistantFiles (root: string, assistants: Assistant[], context: RulesContext): Promise<OutputFile[]> {
  if (assistants.length === 0) return []
  const rules = await renderTemplate('ai/rules.md', { ...context })
  const files: OutputFile[] = []
  for (const assistant of assistants) {
    files.push({ path: path.join(root, assistant.file), content: await renderTemplate(assistant.template, { ...context, rules }) })
  }
  return files
}

/** The rules name the directories this project actually uses. */
export function rulesContext (root: string, name?: string): RulesContext {
  const layout = detectLayout(root)
  const relative = (dir: string) => path.relative(root, dir).split(path.sep).join('/') || '.'
  return { projectName: name ?? projectName(root), modelsDir: relative(layout.modelsDir), functionsDir: relative(layout.functionsDir) }
}

export interface AiOptions {
  yes?: boolean
  force?: boolean
}

export async function ai (io: Io, targets: string | undefined, options: AiOptions = {}): Promise<void> {
  const assistants = await chooseAssistants(io, targets, options.yes)
  if (assistants.length === 0) {
    io.out('No assistant files written (none chosen).\n')
    return
  }
  const root = findProjectRoot(io.cwd) ?? io.cwd
  const files = await assistantFiles(root, assistants, rulesContext(root))
  const lines: string[] = []
  const toWrite: OutputFile[] = []
  for (const file of files) {
    const exists = existsSync(file.path)
    if (exists && !options.force) {
      lines.push(`  kept     ${displayPath(file.path, io.cwd)} (it exists; -f overwrites it)`)
    } else {
      lines.push(`  ${exists ? 'replaced' : 'wrote   '} ${displayPath(file.path, io.cwd)}`)
      toWrite.push(file)
    }
  }
  await writeNewFiles(toWrite, { force: true, cwd: io.cwd })
  io.out(lines.join('\n') + '\n')
}
