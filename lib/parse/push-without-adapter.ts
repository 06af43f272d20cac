// Parse's getPushController loads @parse/push-adapter (firebase-admin, APNs,
// web-push, Expo: some 15 MB resident) on every start, even when no `push`
// option is set and push can only answer "Missing push configuration". Without
// that option this builds what Parse builds, with a stand-in for the adapter
// nothing calls: PushController#sendPush refuses before anything is queued, so
// the worker never receives a message. With a `push` option Parse's own
// function runs. test/parse-contract.test.ts compares both answers.
import { parseInternals, type PushControllers } from './internals.js'

const INSTALLED = Symbol.for('fastify-parse-kit.push-without-adapter')

type GetPushController = ReturnType<typeof parseInternals>['Controllers']['getPushController']

let shipped: GetPushController | undefined

/** Parse's own getPushController, as the package exports it (taken before installPushWithoutAdapter replaces it; Parse loads at the first call). */
export function parseGetPushController (): GetPushController {
  shipped ??= parseInternals().Controllers.getPushController
  return shipped
}

/** Answers PushAdapter's methods (PushWorker validates them) for a server without push. */
class NoPushAdapter {
  getValidPushTypes (): string[] { return [] }
  send (): Promise<never> { return Promise.reject(new Error('push is not configured')) }
}

async function getPushController (options: Parameters<GetPushController>[0]): Promise<PushControllers> {
  if (options.push) return parseGetPushController()(options)
  const { PushController, PushQueue, PushWorker } = parseInternals()
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
  const { Controllers } = parseInternals()
  const exports = Controllers as unknown as Record<symbol, unknown>
  if (exports[INSTALLED]) return
  parseGetPushController()
  Controllers.getPushController = getPushController
  exports[INSTALLED] = true
}
