// Parse's getPushController loads @parse/push-adapter (firebase-admin, APNs,
// web-push, Expo: some 15 MB resident) on every start, even when no `push`
// option is set and push can only answer "Missing push configuration". Without
// that option this builds what Parse builds, with a stand-in for the adapter
// nothing calls: PushController#sendPush refuses before anything is queued, so
// the worker never receives a message. With a `push` option Parse's own
// function runs. test/parse-contract.test.ts compares both answers.
import { Controllers, PushController, PushQueue, PushWorker, type PushControllers } from './internals.js'

const INSTALLED = Symbol.for('fastify-parse-kit.push-without-adapter')

/** Parse's own getPushController, as the package exports it. */
export const parseGetPushController = Controllers.getPushController

/** Answers PushAdapter's methods (PushWorker validates them) for a server without push. */
class NoPushAdapter {
  getValidPushTypes (): string[] { return [] }
  send (): Promise<never> { return Promise.reject(new Error('push is not configured')) }
}

async function getPushController (options: Parameters<typeof parseGetPushController>[0]): Promise<PushControllers> {
  if (options.push) return parseGetPushController(options)
  // As Parse without a push option: no queue options, a worker on the default channel, no push support.
  return {
    pushController: new PushController(),
    hasPushSupport: false,
    hasPushScheduledSupport: false,
    pushControllerQueue: new PushQueue({}),
    pushWorker: new PushWorker(new NoPushAdapter(), {})
  }
}

/** Idempotent: every server started in the process takes the same function. */
export function installPushWithoutAdapter (): void {
  const exports = Controllers as unknown as Record<symbol, unknown>
  if (exports[INSTALLED]) return
  Controllers.getPushController = getPushController
  exports[INSTALLED] = true
}
