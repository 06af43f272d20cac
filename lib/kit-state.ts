// The running kit's state, in one object. Parse Server and its SDK are process
// singletons (app id, server URL, triggers, caches), so a process runs one kit
// at a time; everything that kit keeps while it runs — its settings, the role
// cache, the transaction queue, the open database, the schema lock — hangs off
// its KitState, created for each registration and dropped at close, so nothing
// of one registration reaches the next.
//
// The slot below is the one process-level fact. plugin.ts claims it at
// registration (fastify.kit.state) and hands it on explicitly where it can;
// code that runs without an instance at hand (decorators and helpers called
// from handlers: withTransaction, invalidateRoles, BaseModel) finds it through
// currentKitState(). Settings made before any registration (configureKit,
// configureRoleCache at the top of a file) land in the state the next
// registration claims.
//
// Declarations collected at import time (@ParseClass, @Route, @CloudFunction,
// triggers, @Transactional) are class metadata, not runtime state: they stay in
// their registries.

/** One concern's share of the state; `create` makes it fresh for each kit. */
export interface StatePart<T> {
  readonly name: string
  readonly create: () => T
}

export function statePart<T> (name: string, create: () => T): StatePart<T> {
  return { name, create }
}

export class KitState {
  /** The app id of the kit that claimed this state; undefined while it only collects settings made before registration. */
  appId: string | undefined
  private readonly parts = new Map<StatePart<unknown>, unknown>()

  get<T> (part: StatePart<T>): T {
    if (!this.parts.has(part)) this.parts.set(part, part.create())
    return this.parts.get(part) as T
  }
}

let active = new KitState()

/** The state of the kit running in this process, or of the next one to register. */
export function currentKitState (): KitState {
  return active
}

export interface ProcessClaim {
  state: KitState
  /** Drops the state and frees the process for the next registration (safe to call twice). */
  release: () => void
}

/** Claims the process for one kit; a second claim while one is alive is refused. */
export function claimProcess (appId: string, refuse: (message: string) => Error = (message) => new Error(message)): ProcessClaim {
  if (active.appId !== undefined) {
    throw refuse(`kitPlugin is already registered in this process (app id "${active.appId}"): Parse Server keeps process-wide state, so one process runs one kit. Close the other Fastify instance first (await app.close()), or run the second kit in its own process.`)
  }
  const state = active
  state.appId = appId
  let released = false
  return {
    state,
    release () {
      if (released) return
      released = true
      if (active === state) active = new KitState()
    }
  }
}
