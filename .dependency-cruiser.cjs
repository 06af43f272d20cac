// Import rules checked by `npm run check:cycles` (part of `npm test`).
// The layering is the table in docs/internals/architecture.md: this file reads
// it and makes one rule per row, so the page and the check cannot disagree.
const { readFileSync } = require('node:fs')
const path = require('node:path')

const ARCHITECTURE = path.join(__dirname, 'docs/internals/architecture.md')
const KIT = '^(lib/|plugin\\.ts$|cli/)'

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const names = (cell) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1])

/** A row's own name (`lib/access/`, `plugin.ts`) as a path pattern. */
function rowPattern (name) {
  return name.endsWith('/') ? `^${escape(name)}` : `^${escape(name)}$`
}

/** An entry of "imports from" (`access`, `options.ts`, `storage/unavailable.ts`) as a path under lib/. */
function importedPath (name) {
  return name.endsWith('.ts') ? `lib/${name}` : `lib/${name}/`
}

/** The rows of the layering table, top first: { label, owns, allows, everywhere }. */
function layeringRows (markdown) {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => /^\| folder \| job \| imports from \|$/.test(line))
  if (start === -1) throw new Error(`${ARCHITECTURE}: the layering table (| folder | job | imports from |) is missing`)
  const rows = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim())
    if (cells.length !== 3) throw new Error(`${ARCHITECTURE}: a layering row needs three cells: ${line}`)
    const owns = names(cells[0])
    rows.push({ label: owns.join(', '), owns, imports: cells[2], everywhere: /every folder may import it/.test(cells[2]) })
  }
  return rows
}

/** The index of the row that holds `file` (a path under lib/, or a row's own name), or -1. */
function rowOf (rows, file) {
  return rows.findIndex((row) => row.owns.some((own) => own.endsWith('/') ? file.startsWith(own) : file === own))
}

/** One rule per row: an import of anything of the kit the row does not list is refused. */
function layeringRules (markdown) {
  const rows = layeringRows(markdown)
  return rows.map((row, index) => {
    const allowed = row.imports.startsWith('everything below')
      ? rows.slice(index + 1).flatMap((below) => below.owns)
      : names(row.imports).map(importedPath)
    for (const target of allowed) {
      const at = rowOf(rows, target)
      if (at === -1) throw new Error(`${ARCHITECTURE}: ${row.label} imports from ${target}, which no row owns`)
      // One way only: a row lists rows below it, so no two folders can import each other.
      if (at <= index) throw new Error(`${ARCHITECTURE}: ${row.label} imports from ${target}, which is not below it`)
    }
    // "every folder may import it": every row above it may, without listing it.
    const everywhere = rows.slice(index + 1).filter((below) => below.everywhere).flatMap((below) => below.owns)
    const fine = [...row.owns, ...allowed, ...everywhere].map(rowPattern)
    return {
      name: `${row.label} imports only its row`,
      severity: 'error',
      comment: `docs/internals/architecture.md: ${row.label} imports from ${row.imports}`,
      from: { path: row.owns.map(rowPattern).join('|') },
      to: { path: KIT, pathNot: fine.join('|') }
    }
  })
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A circular import: move the shared type or constant into a leaf module.',
      from: {},
      to: { circular: true }
    },
    {
      name: 'parse-internals-through-the-seam',
      severity: 'error',
      comment: "Parse Server's private modules (parse-server/lib/…) are imported in lib/parse/ only.",
      from: { pathNot: '^lib/parse/' },
      to: { path: 'node_modules/parse-server/lib/', pathNot: 'node_modules/parse-server/lib/index\\.js$' }
    },
    ...layeringRules(readFileSync(ARCHITECTURE, 'utf8'))
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // cli/templates/ holds files that are TypeScript only once rendered.
    exclude: { path: '^(dist|cli/templates)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] }
  }
}
