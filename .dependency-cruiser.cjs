// Import rules checked by `npm run check:cycles` (part of `npm test`).
// README.md "Architecture" explains the layering these rules keep.
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
      name: 'parse-is-a-leaf',
      severity: 'error',
      comment: "lib/parse/ is the seam to Parse's private modules; it imports nothing of the kit.",
      from: { path: '^lib/parse/' },
      to: { path: '^(lib|plugin\\.ts|cli)', pathNot: '^lib/parse/' }
    },
    {
      name: 'parse-internals-through-the-seam',
      severity: 'error',
      comment: "Parse Server's private modules (parse-server/lib/…) are imported in lib/parse/ only.",
      from: { pathNot: '^lib/parse/' },
      to: { path: 'node_modules/parse-server/lib/', pathNot: 'node_modules/parse-server/lib/index\\.js$' }
    },
    {
      name: 'errors-is-a-leaf',
      severity: 'error',
      comment: "lib/errors.ts holds the kit's error codes and statuses; every folder may import it, so it imports nothing of the kit.",
      from: { path: '^lib/errors\\.ts$' },
      to: { path: '^(lib/|plugin\\.ts$|cli/)' }
    },
    {
      name: 'kit-state-is-a-leaf',
      severity: 'error',
      comment: "lib/kit-state.ts holds the running kit's state; every folder may import it, so it imports nothing of the kit.",
      from: { path: '^lib/kit-state\\.ts$' },
      to: { path: '^(lib/|plugin\\.ts$|cli/)' }
    },
    {
      name: 'only-the-top-mounts',
      severity: 'error',
      comment: 'lib/host/ mounts Parse and the gate; only plugin.ts and the public index build on it.',
      from: { path: '^lib/', pathNot: '^lib/(host/|index\\.ts$)' },
      to: { path: '^lib/host/' }
    },
    {
      name: 'no-folder-cycles',
      severity: 'error',
      comment: 'lib/access/ sits below the model, routing, storage and host folders; it does not import them.',
      from: { path: '^lib/access/' },
      to: { path: '^lib/(host|model|routing|storage|docs|cluster|seed|triggers)/' }
    }
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
