// Polls a condition until it holds, failing with what was awaited after a bounded time
// (by default a minute on a quiet machine, stretched with the load as every wait of the suite).
import { scaled } from './time-scale.js'

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export async function until (what: string, condition: () => boolean | Promise<boolean>, timeoutMs = scaled(60_000)): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}
