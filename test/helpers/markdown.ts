// What the documentation test reads from Markdown: fenced code blocks (with
// their info string and first line) and relative links with their anchors.
// Small on purpose: CommonMark's fence and link rules as far as our pages use them.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

export interface CodeBlock {
  /** The Markdown file, relative to the repository root. */
  file: string
  /** 1-based line of the block's first code line. */
  line: number
  /** The info string's words: ['ts'], ['ts', 'fragment'], ['sh'] … */
  info: string[]
  code: string
}

export interface Link {
  file: string
  line: number
  /** As written: `../guides/models.md#schema-options`. */
  target: string
}

/** README.md and every Markdown file under docs/, relative to `root`, sorted. */
export function markdownFiles (root: string): string[] {
  const found = ['README.md']
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = path.posix.join(dir, entry.name)
      if (entry.isDirectory()) walk(relative)
      else if (entry.name.endsWith('.md')) found.push(relative)
    }
  }
  walk('docs')
  return found.sort()
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/

/** Splits a page into fenced blocks and the prose lines outside them. */
export function parseMarkdown (file: string, text: string): { blocks: CodeBlock[], prose: Array<{ line: number, text: string }> } {
  const blocks: CodeBlock[] = []
  const prose: Array<{ line: number, text: string }> = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i])
    // A backtick fence's info string cannot contain a backtick: "```` ```ts ```` block" is inline code.
    if (!open || (open[1][0] === '`' && open[2].includes('`'))) {
      prose.push({ line: i + 1, text: lines[i] })
      continue
    }
    const [marker, rest] = [open[1], open[2]]
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j])
      if (close && close[1][0] === marker[0] && close[1].length >= marker.length && close[2].trim() === '') break
      body.push(lines[j])
    }
    blocks.push({ file, line: i + 2, info: rest.trim().split(/\s+/).filter(Boolean), code: body.join('\n') })
    i = j
  }
  return { blocks, prose }
}

/** Links in prose (inline code removed first) that point at another file or an anchor, not at a URL. */
export function relativeLinks (file: string, prose: Array<{ line: number, text: string }>): Link[] {
  const links: Link[] = []
  for (const { line, text } of prose) {
    const withoutCode = text.replace(/(`+)[^`]*?\1/g, '')
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
      links.push({ file, line, target })
    }
  }
  return links
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2 … */
export function headingAnchors (text: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const { text: line } of parseMarkdown('', text).prose) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const base = heading[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

export function readPage (root: string, file: string): string {
  return readFileSync(path.join(root, file), 'utf8')
}
