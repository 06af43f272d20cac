// withTransaction and @Transactional: a whole handler body in one database
// transaction, on either database, re-run on a transient conflict.
import Parse from 'parse/node'
import { CONFLICT, CONFLICT_MESSAGE } from '../errors.js'
import { transactionScope, type TransactionScope } from './scope.js'
import { isTransient } from './transient.js'
import { isDatabaseUnavailable } from './unavailable.js'

import type { TransactionalAdapter } from '../parse/internals.js'

export type { TransactionalAdapter }

export interface TransactionOptions {
  /** How many times the body runs at most (the first run included). Default 3. */
  attempts?: number
}

let adapter: TransactionalAdapter | undefined
let directAccess = true
let declared = 0
const MAX_CONCURRENT = 8
let running = 0
const waiting: Array<() => void> = []

/** Called by kitPlugin at boot with the wrapped storage adapter. */
export function useTransactionalAdapter (next: TransactionalAdapter | undefined, options: { directAccess: boolean } = { directAccess: true }): void {
  adapter = next
  directAccess = options.directAccess
}

/** Whether any method is decorated with @Transactional (boot checks directAccess then). */
export function transactionalDeclared (): boolean {
  return declared > 0
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
  if (!adapter) throw new Error('withTransaction needs a running kitPlugin (no storage adapter is installed yet)')
  if (!directAccess) throw new Error('Transactions need Parse Server option directAccess: true (saves made over HTTP cannot join them)')
  const attempts = options.attempts ?? 3
  for (let attempt = 1; ; attempt++) {
    try {
      return await runOnce(adapter, body)
    } catch (error) {
      // A lost database is not a conflict (MongoDB labels network errors transient too): answer 503 at once.
      if (isDatabaseUnavailable(error)) throw error
      const retryable = isTransient(error) || (error as { code?: unknown }).code === CONFLICT
      if (!retryable) throw error
      if (attempt >= attempts) throw new Parse.Error(CONFLICT, CONFLICT_MESSAGE)
      await pause(attempt)
    }
  }
}

async function runOnce<T> (storage: TransactionalAdapter, body: () => Promise<T> | T): Promise<T> {
  await slot()
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
    for (const callback of scope.afterCommit) await callback()
    return result
  } finally {
    release()
  }
}

/**
 * Each open transaction holds a pooled connection; capping how many run at
 * once leaves connections for the work they wait on, so a burst queues
 * instead of starving the pool.
 */
function slot (): Promise<void> {
  if (running < MAX_CONCURRENT) {
    running++
    return Promise.resolve()
  }
  return new Promise((resolve) => waiting.push(() => { running++; resolve() }))
}

function release (): void {
  running--
  waiting.shift()?.()
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
      throw new Error('@Transactional is a legacy decorator: set "experimentalDecorators": true in tsconfig.json')
    }
    const method = descriptor?.value
    if (typeof method !== 'function') throw new Error(`@Transactional on ${String(propertyKey)}: decorate a method`)
    declared++
    descriptor!.value = function (this: unknown, ...args: unknown[]) {
      return withTransaction(() => method.apply(this, args), options)
    }
  }
}
