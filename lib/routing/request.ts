// The request a handler receives: Parse Cloud Code's shape, built from the Fastify request.
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { IncomingHttpHeaders } from 'node:http'
import Parse from 'parse/node'
import { refuseNul } from '../storage/nul.js'
import type { Caller } from '../access/admission.js'
import type { Credentials } from '../access/credentials.js'

/** Everything a handler receives but who the caller is (see CloudRequest and RequestOf). */
export interface CloudRequestBase<P> {
  /** Body and query string merged; declared fields are converted by their schema, the rest stay as sent (dates become Dates: routing/parse-dates.ts). */
  params: P
  installationId: string | undefined
  headers: IncomingHttpHeaders
  ip: string
  functionName: string
  log: FastifyBaseLogger
  /** Free for the handler's own use during this call. */
  context: Record<string, unknown>
}

/**
 * A handler's request. `CloudRequest` alone leaves params untyped; give the
 * params (`CloudRequest<{ id: string }>`) or use `RequestOf<typeof options>`,
 * and @CloudFunction checks them against validation.fields.
 */
export interface CloudRequest<P = Record<string, any>> extends CloudRequestBase<P> { // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The user behind X-Parse-Session-Token, if any. */
  user: Parse.User | undefined
  /** The caller presented the master key. */
  master: boolean
}

export function buildCloudRequest (request: FastifyRequest, functionName: string, caller: Caller, credentials: Credentials): CloudRequest {
  const query = request.query && typeof request.query === 'object' ? request.query as Record<string, unknown> : {}
  const body = request.body && typeof request.body === 'object' && !Array.isArray(request.body) ? request.body as Record<string, unknown> : {}
  const params = { ...query, ...body }
  // Named as the caller sent it (the storage adapter refuses it too, naming the stored field).
  refuseNul(params)
  const installationId = credentials.installationId
  const headers = request.headers
  const ip = request.ip
  const log = request.log
  // Without a session (master key, nobody) `user` is a plain field; with one, the user is built on first read (see lookUpCaller).
  if (caller.userId === undefined) return { params, user: undefined, master: caller.master, installationId, headers, ip, functionName, log, context: {} }
  return {
    params,
    get user () { return caller.user },
    master: caller.master,
    installationId,
    headers,
    ip,
    functionName,
    log,
    context: {}
  }
}

/** SDK options that act as the caller: the master key, the caller's session, or nobody (public access only). */
export function asCaller (request: Pick<CloudRequest, 'master' | 'user'>): { useMasterKey: true } | { sessionToken: string } | Record<string, never> {
  if (request.master) return { useMasterKey: true }
  const sessionToken = request.user?.getSessionToken()
  return sessionToken ? { sessionToken } : {}
}

/**
 * The signed-in user a handler acts for. `requiresAuth` lets the master key
 * through without a user; a handler that needs one (an owner, a customer, a
 * staff member) calls this and the master key alone gets 119 saying what to send.
 */
export function requireUser (request: Pick<CloudRequest, 'user'>, message = 'This call acts for a signed-in user: send X-Parse-Session-Token (the master key alone is not a user).'): Parse.User {
  if (request.user) return request.user
  throw new Parse.Error(Parse.Error.OPERATION_FORBIDDEN, message)
}
