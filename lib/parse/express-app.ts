// Parse Server's Express app: the layers of its router, from which the kit
// learns Parse's routes (host/parse-routes.ts). Express 5 exposes the router as
// `app.router`; Express 4 kept it private as `app._router`.

/** The top-level layers of an Express app's router, or undefined when it has none. */
export function expressRouterStack (app: unknown): unknown[] | undefined {
  const express = app as { router?: { stack?: unknown }, _router?: { stack?: unknown } }
  const stack = (express.router ?? express._router)?.stack
  return Array.isArray(stack) ? stack : undefined
}
