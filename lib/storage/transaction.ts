// withTransaction and @Transactional: a whole handler body in one database
// transaction, on either database, re-run on a transient conflict.
import Parse from 'parse/node'
import { CONFLICT, CONFLICT_MESSAGE, DecoratorsConfigError, KitNotRunningError, OptionInvalidError, RouteDeclarationError } from '../errors.js'
import { transactionScope, type TransactionScope } from './scope.js'
import { isTransient } from './transient.js'
import { isDatabaseUnavailable } from './unavailable.js'
import { ConnectionWaitError, callBoundOf, isWaitForConnection, outsideDeadline, timeLeft, withinDeadline } from './call-bound.js'
import { availabilityOf, outage } from './outages.js'
import { currentKitState, statePart, type KitState } from '../kit-state.js'
import { declaringFile, type ForgottenDeclaration } from '../declaring-file.js'

import type { TransactionalAdapter } from '../parse/internals.js'
import { metricHooks } from '../metrics/hooks.js'
import { inSpan } from '../tracing/spans.js'
import type { Span } from '@opentelemetry/api'

export type { TransactionalAdapter }

export interface TransactionOptions {
  /** How many times the body runs at most (the first run included). Default 3. */
  attempts?: number
}

const MAX_CONCURRENT = 8
/** How many methods carry @Transactional: class metadata counted at import, like the other declaration registries. */
const declaredIn: Array<string | undefined> = []

/**
 * One kit's transactions: the storage adapter they run on and the queue that
 * caps how many are open at once. Each open transaction holds a pooled
 * connection; capping them leaves connections for the work they wait on, so a
 * burst queues instead of starving the pool.
 */
export class TransactionRunner {
  adapter: TransactionalAdapter | undefined
  directAccess = true
  private running = 0
  private readonly waiting: Array<() => void> = []

  /** Resolves once a transaction may open; rejects with ConnectionWaitError after `timeoutMs` in the queue (behind the instance's own transactions). */
  slot (timeoutMs?: number): Promise<void> {
    if (this.running < MAX_CONCURRENT) {
      this.running++
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      const take = () => { clearTimeout(timer); this.running++; resolve() }
      const timer = timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(take), 1)
          reject(new ConnectionWaitError(timeoutMs))
        }, timeoutMs)
      this.waiting.push(take)
    })
  }

  release (): void {
    this.running--
    this.waiting.shift()?.()
  }
}

/** The running kit's transactions. */
export const transactionsPart = statePart('transactions', () => new TransactionRunner())

/** Called by kitPlugin at boot with the wrapped storage adapter. */
export function useTransactionalAdapter (state: KitState, next: TransactionalAdapter | undefined, options: { directAccess: boolean } = { directAccess: true }): void {
  const runner = state.get(transactionsPart)
  runner.adapter = next
  runner.directAccess = options.directAccess
}

/** Whether any method is decorated with @Transactional (boot checks directAccess then). */
export function transactionalDeclared (): boolean {
  return declaredIn.length > 0
}

/** Drops the @Transactional methods counted so far (see lib/forget-declarations.ts). */
export function forgetTransactional (): ForgottenDeclaration[] {
  return declaredIn.splice(0).map((file) => ({ file, revive: () => { declaredIn.push(file) } }))
}

export function inTransaction (): boolean {
  return transactionScope.getStore() !== undefined
}

/**
 * Runs `body` in a transaction: every save, destroy and query made through the
 * Parse SDK inside it joins, and a throw rolls all of it back. A call inside
 * another transaction joins that one. A transient conflict re-runs the body
 * (so side effects that must not repeat belong after it returns); when the
 * attempts are spent the caller gets CONFLICT (5001).
 */
export async function withTransaction<T> (body: () => Promise<T> | T, options: TransactionOptions = {}): Promise<T> {
  if (inTransaction()) return body()
  const runner = currentKitState().get(transactionsPart)
  const adapter = runner.adapter
  if (!adapter) throw new KitNotRunningError('withTransaction needs a running kitPlugin: call it from a handler or trigger, or after await app.ready() (no database is connected yet)')
  if (!runner.directAccess) throw new OptionInvalidError('Transactions need Parse Server option directAccess: true (saves made over HTTP cannot join them)')
  const attempts = options.attempts ?? 3
  // databaseTimeout bounds the transactional call whole: the wait for a slot, BEGIN, the body's
  // calls, COMMIT and any re-run share one deadline (each on its own would add up to a multiple).
  const bound = callBoundOf(adapter)
  const run = (span?: Span) => bound === undefined
    ? runWithRetries(runner, adapter, body, attempts, span)
    : withinDeadline(bound, () => runWithRetries(runner, adapter, body, attempts, span))
  const availability = availabilityOf(adapter)
  return inSpan('fpk.transaction', { 'fpk.transaction.max_attempts': attempts }, run).catch((error: unknown) => {
    // A wait for a transaction slot that ran out is a wait for a connection: overload or outage, as a probe says.
    if (availability && error instanceof ConnectionWaitError && isWaitForConnection(error)) return outage(error, availability)
    throw error
  })
}

async function runWithRetries<T> (runner: TransactionRunner, adapter: TransactionalAdapter, body: () => Promise<T> | T, attempts: number, span?: Span): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runOnce(runner, adapter, body)
    } catch (error) {
      // The body has committed: its afterCommit callback's error is the answer, never a reason to run it again.
      if (error instanceof CallbackFailure) throw error.failure
      // A lost database is not a conflict (MongoDB labels network errors transient too): answer 503 at once.
      if (isDatabaseUnavailable(error)) throw error
      const retryable = isTransient(error) || (error as { code?: unknown } | null)?.code === CONFLICT
      if (!retryable) throw error
      if (attempt >= attempts) {
        metricHooks().transactionConflicted()
        throw new Parse.Error(CONFLICT, CONFLICT_MESSAGE)
      }
      metricHooks().transactionRetried()
      span?.addEvent('fpk.transaction.retry', { 'fpk.transaction.attempt': attempt })
      await pause(attempt)
    }
  }
}

async function runOnce<T> (runner: TransactionRunner, storage: TransactionalAdapter, body: () => Promise<T> | T): Promise<T> {
  await runner.slot(timeLeft())
  try {
    const scope: TransactionScope = { session: await storage.createTransactionalSession(), afterCommit: [] }
    let result: T
    try {
      result = await transactionScope.run(scope, body)
    } catch (error) {
      await storage.abortTransactionalSession(scope.session).catch(() => {})
      throw scope.conflict ?? error
    }
    await storage.commitTransactionalSession(scope.session).catch((error: unknown) => { throw scope.conflict ?? error })
    // After the commit: side effects, not part of the transaction's bounded call.
    for (const callback of scope.afterCommit) {
      try {
        await outsideDeadline(callback)
      } catch (failure) {
        throw new CallbackFailure(failure)
      }
    }
    return result
  } finally {
    runner.release()
  }
}

/** An afterCommit callback failed after the commit (a conflict it throws ran the whole body again before). */
class CallbackFailure {
  constructor (readonly failure: unknown) {}
}

/** A short, jittered pause so re-runs of colliding transactions do not collide again. */
function pause (attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt))
}

/**
 * Runs `callback` once the surrounding transaction has committed — the place
 * for side effects that must not repeat (emails, charges), since a body may
 * re-run. Outside a transaction it runs at once.
 */
export async function afterCommit (callback: () => unknown): Promise<void> {
  const scope = transactionScope.getStore()
  if (scope) scope.afterCommit.push(callback)
  else await callback()
}

/** Runs the decorated method in withTransaction. Place it directly above the method; @CloudFunction may sit above or below. */
export function Transactional (options: TransactionOptions = {}) {
  return function (_target: object, propertyKey: unknown, descriptor?: PropertyDescriptor): void {
    if (typeof propertyKey === 'object' && propertyKey !== null && 'kind' in propertyKey) {
      throw new DecoratorsConfigError('@Transactional is a legacy decorator: set "experimentalDecorators": true in tsconfig.json')
    }
    const method = descriptor?.value
    if (typeof method !== 'function') throw new RouteDeclarationError(`@Transactional on ${String(propertyKey)}: decorate a method`)
    declaredIn.push(declaringFile())
    descriptor!.value = function (this: unknown, ...args: unknown[]) {
      return withTransaction(() => method.apply(this, args), options)
    }
  }
}
