// `npm run lint` (part of `npm test`): neostandard, the standard style with TypeScript.
import neostandard from 'neostandard'

const SEAM = 'lib/parse/ (a named function there; see docs/internals/parse-seam.md)'
const PRIVATE_MODULES = {
  selector: 'TSModuleDeclaration[id.value=/^parse(-server)?\\u002F/]',
  message: "Declare Parse's private modules in lib/parse/ only."
}
const PRIVATE_MEMBERS = [
  {
    selector: 'MemberExpression[computed=false][property.name=/^(_(?!_)|[$])/]',
    message: `A private member (underscore or $): reach Parse's and its drivers' private surface through ${SEAM}.`
  },
  {
    selector: 'MemberExpression[computed=true][property.value=/^(_(?!_)|[$])/]',
    message: `A private member (underscore or $): reach Parse's and its drivers' private surface through ${SEAM}.`
  }
]

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
      'cli/templates/**',
      // Files tests render and remove while ESLint may be walking test/ (test/helpers/checkout-scratch.ts).
      'test/scratch/'
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
    // Parse's private surface (deep modules, underscore and `$` members of Parse's
    // and its drivers' objects) is touched in lib/parse/ only, through named
    // functions listed in docs/internals/parse-seam.md and pinned by
    // test/parse-contract.test.ts. Tests may read it to check the seam.
    files: ['**/*.ts'],
    ignores: ['lib/parse/**'],
    rules: { 'no-restricted-syntax': ['error', PRIVATE_MODULES] }
  },
  {
    files: ['lib/**/*.ts', 'plugin.ts', 'cli/**/*.ts', 'fixtures/**/*.ts'],
    ignores: ['lib/parse/**'],
    rules: { 'no-restricted-syntax': ['error', PRIVATE_MODULES, ...PRIVATE_MEMBERS] }
  }
]
