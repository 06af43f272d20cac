// FPK_FAST_PATHS=false runs the suite on Parse's own chains (the kit reads the
// variable as its `fastPaths` option): tests that check a fast path served a
// case expect none served then, and still compare every answer with REST's.
export const FAST_PATHS = process.env.FPK_FAST_PATHS !== 'false'
