// `npm run lint` (part of `npm test`): neostandard, the standard style with TypeScript.
import neostandard from 'neostandard'

export default [
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      // Benchmark output, written by `npm run bench`.
      'test/bench/results/**',
      // The benchmark's NestJS peer: its own package, lockfile and build (test/bench/nest-peer.ts).
      'test/bench/nest/**',
      // Templates are TypeScript only once the CLI has rendered them.
      'cli/templates/**'
    ]
  },
  ...neostandard({ ts: true }),
  {
    rules: {
      // Long option objects wrap with several properties to a line.
      '@stylistic/object-property-newline': 'off',
      // `void promise` marks a deliberate fire-and-forget.
      'no-void': ['error', { allowAsStatement: true }]
    }
  },
  {
    // The library types what it handles; tests may read answers as `any`.
    files: ['lib/**/*.ts', 'plugin.ts', 'cli/**/*.ts', 'fixtures/**/*.ts', 'test/bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' }
  },
  {
    // Parse's private shapes are declared once, in lib/parse/ (the seam test/parse-contract.test.ts checks).
    files: ['**/*.ts'],
    ignores: ['lib/parse/**'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: 'TSModuleDeclaration[id.value=/^parse(-server)?\\u002F/]',
        message: "Declare Parse's private modules in lib/parse/ only."
      }]
    }
  }
]
