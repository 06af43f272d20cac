// The kit option `fastPaths`, as every fast path in this folder reads it. Off
// (`fastPaths: false`, or FPK_FAST_PATHS=false), each one takes Parse's own
// path instead: RestQuery for every read, rest.create for every create, Parse's
// REST controller for the SDK's saves, a schema load per step, Parse's keyword
// scan, and no shared session or role loads. That is the kit on Parse's chains
// alone: what a maintainer runs to bisect a regression after a Parse upgrade,
// or to ship one before the fast paths are checked against it again.
//
// lib/parse/ imports nothing of the kit, so it cannot look the running kit up:
// the kit hands in a reader of its own setting when it registers (plugin.ts).
// Patches of Parse are installed once per process; they read the switch on
// every call, so each kit that runs in the process gets its own setting.
const READER = Symbol.for('fastify-parse-kit.fast-paths')

interface Holder { [READER]?: () => boolean }

/** Called at registration with the running kit's setting (its reader answers true once that kit is gone). */
export function readFastPathsFrom (read: () => boolean): void {
  (globalThis as Holder)[READER] = read
}

/** Whether the fast paths run (true when no kit said otherwise). */
export function fastPathsOn (): boolean {
  return (globalThis as Holder)[READER]?.() ?? true
}
