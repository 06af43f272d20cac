// Parse Server and its SDK keep process-wide state (the app id, the server URL,
// caches, triggers): two kits alive in one process would share and overwrite it.
// A second registration while one is running is refused; closing releases it.

let holder: string | undefined

/** Claims the process for one kit; the returned function releases it (safe to call twice). */
export function claimProcess (appId: string): () => void {
  if (holder !== undefined) {
    throw new Error(`kitPlugin is already registered in this process (app id "${holder}"): Parse Server keeps process-wide state, so one process runs one kit. Close the other Fastify instance first (await app.close()), or run the second kit in its own process.`)
  }
  holder = appId
  let released = false
  return () => {
    if (released) return
    released = true
    holder = undefined
  }
}
