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
 * Timeouts set in the URI win; a URI with `socketTimeoutMS` (and no `timeoutMS`) keeps its
 * per-socket bounds. With schema hooks, Parse's schema change stream runs under `timeoutMS`
 * too: its failures reach the listener schema-stream.ts gives it.
 */
export function boundedMongoOptions (uri: string, timeoutMs: number): Record<string, unknown> {
  const set = (name: string) => new RegExp(`[?&]${name}=`, 'i').test(uri)
  const overall = !set('timeoutMS') && !set('socketTimeoutMS')
  return {
    ...(overall ? { timeoutMS: timeoutMs } : {}),
    ...(set('serverSelectionTimeoutMS') ? {} : { serverSelectionTimeoutMS: Math.min(SERVER_SELECTION_MS, timeoutMs) }),
    ...(set('connectTimeoutMS') ? {} : { connectTimeoutMS: Math.min(CONNECT_MS, timeoutMs) })
  }
}

/** The MongoDB driver's own default maxPoolSize, which Parse keeps. */
export const MONGO_DEFAULT_POOL_SIZE = 100

/** The driver's maxPoolSize: the kit's option, else the URI's maxPoolSize, else 100. */
export function mongoPoolSize (uri: string, option: number | undefined): number {
  if (option !== undefined) return option
  const given = Number.parseInt(/[?&]maxPoolSize=(\d+)/i.exec(uri)?.[1] ?? '', 10)
  return given > 0 ? given : MONGO_DEFAULT_POOL_SIZE
}
