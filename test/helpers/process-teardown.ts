// A teardown for the end of the test process. Where several test files share
// one process (test/helpers/file-group.ts), a teardown a file registers on the
// root test runs when that file ends, as it would when its own process ended;
// what serves every file of the process (the shared PostgreSQL server) waits
// for the process's end instead.
import tap from 'tap'

type Teardown = () => unknown

let processTeardown: (fn: Teardown) => void = (fn) => { tap.teardown(fn) }

/** Registers `fn` to run when the test process ends. */
export function atProcessEnd (fn: Teardown): void {
  processTeardown(fn)
}

/** From now on, root teardowns go to `collect` (a file's own); atProcessEnd keeps the process's. */
export function collectRootTeardowns (collect: (fn: Teardown) => void): void {
  // tap's root swaps its teardown for the plain one at the first call (it then ends itself when idle): make that call first.
  tap.teardown(() => {})
  const original = tap.teardown.bind(tap)
  processTeardown = (fn) => { original(fn) }
  tap.teardown = ((fn: Teardown) => { collect(fn) }) as typeof tap.teardown
}
