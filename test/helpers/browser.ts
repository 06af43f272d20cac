// Headless Chromium (Debian's, through playwright-core) and a tiny static web
// server for pages that act as a browser client on an origin of their own.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import type { BrowserContext } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/** For `t.test(name, { skip: noChromium() }, …)`: the reason when Chromium is absent. */
export function noChromium (): false | string {
  return existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (Debian: apt-get install chromium)`
}

/** A fresh headless Chromium profile, closed and removed when the test ends. */
export async function launchChromium (t: Test, viewport = { width: 1280, height: 900 }): Promise<BrowserContext> {
  const { chromium } = await import('playwright-core')
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'fpk-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'
    ]
  })
  t.teardown(async () => {
    await context.close()
    rmSync(userDataDir, { recursive: true, force: true })
  })
  return context
}

/** Serves fixed bodies by path on 127.0.0.1 (a free port); answers the origin. */
export async function serveStatic (t: Test, files: Record<string, { type: string, body: string | Buffer }>): Promise<string> {
  const server = createServer((request, response) => {
    const file = files[(request.url ?? '/').split('?')[0]]
    if (!file) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': file.type }).end(file.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`
}
