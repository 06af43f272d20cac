// A module resolution hook for test/dashboard.test.ts: `parse-dashboard` is
// installed in test/dashboard/ with a lockfile of its own (npm ci --prefix
// test/dashboard), not in the kit's node_modules, so that the kit's install
// carries none of its React peers. The kit resolves the package by name, as
// in an application; this sends that name to the test's folder.
const from = new URL('../dashboard/package.json', import.meta.url).href

export async function resolve (specifier, context, next) {
  if (specifier === 'parse-dashboard' || specifier.startsWith('parse-dashboard/')) return next(specifier, { ...context, parentURL: from })
  return next(specifier, context)
}
