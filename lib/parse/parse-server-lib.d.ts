// parse-server ships no types for its lib/ modules. Each is imported as its
// module.exports, unknown here; lib/parse/internals.ts gives each the shape
// the kit relies on (lib/parse/*-shapes.ts), and test/parse-contract.test.ts
// checks those shapes against Parse.
declare module 'parse-server/lib/*' {
  const moduleExports: unknown
  export default moduleExports
}

// The Parse SDK's own encoder (lib/parse/internals.ts encodeForSave), typed there.
declare module 'parse/lib/node/encode.js' {
  const moduleExports: unknown
  export default moduleExports
}
