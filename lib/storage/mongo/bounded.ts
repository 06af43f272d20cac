// Bounded waits on MongoDB, so that a server that stops answering (frozen, or
// behind a network partition) makes calls fail with 503 instead of hang. The
// driver's own overall bound (`timeoutMS`, client-side operation timeout)
// covers each operation whole: server selection, taking or opening a
// connection, the command and its retry. A transaction's start, commit and
// abort are operations too, so a transaction caught by a freeze ends within
// the bound for its failing command (the abort is bounded as well).

/** Longest wait for a new connection's handshake (capped by the bound). */
const CONNECT_MS = 10_000
/** Longest wait to find a server (capped by the bound). */
const SERVER_SELECTION_MS = 5_000

/**
 * Options for Parse's MongoDB adapter (`mongoOptions`, passed on to the driver's MongoClient).
 * Timeouts set in the URI win. Without `timeoutMS` — the URI sets `socketTimeoutMS`, or schema
 * hooks are on — each socket read is bounded instead: with `timeoutMS`, Parse's schema change
 * stream reports a timeout as an 'error' event Parse does not listen to, which would end the process.
 */
export function boundedMongoOptions (uri: string, timeoutMs: number, options: { schemaHooks: boolean }): Record<string, unknown> {
  const set = (name: string) => new RegExp(`[?&]${name}=`, 'i').test(uri)
  const overall = !set('timeoutMS') && !set('socketTimeoutMS') && !options.schemaHooks
  const perSocket = !set('timeoutMS') && !set('socketTimeoutMS') && options.schemaHooks
  return {
    ...(overall ? { timeoutMS: timeoutMs } : {}),
    ...(perSocket ? { socketTimeoutMS: timeoutMs } : {}),
    ...(set('serverSelectionTimeoutMS') ? {} : { serverSelectionTimeoutMS: Math.min(SERVER_SELECTION_MS, timeoutMs) }),
    ...(set('connectTimeoutMS') ? {} : { connectTimeoutMS: Math.min(CONNECT_MS, timeoutMs) })
  }
}
