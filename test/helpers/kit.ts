// Boots the real plugin (real Parse Server, real embedded PostgreSQL) for a test file.
import Fastify, { type FastifyInstance } from 'fastify'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import { kitPlugin, type KitOptions } from '../../plugin.js'
import { resetKitConfig } from '../../lib/config.js'

export const APP_ID = 'test-app'
export const MASTER_KEY = 'test-master-key'

export interface Kit {
  app: FastifyInstance
  /** http://127.0.0.1:{port} */
  origin: string
  /** A real HTTP request to the listening server; JSON bodies are stringified. */
  request (method: string, url: string, init?: { headers?: Record<string, string>, body?: unknown, contentType?: string }): Promise<HttpResult>
}

export interface HttpResult {
  status: number
  headers: Headers
  text: string
  json: any
}

/** A temporary directory the OS user `postgres` can traverse (tests run as root here). */
export function tempDir (prefix = 'fpk-test-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix))
  chmodSync(dir, 0o755)
  return dir
}

export async function startKit (t: Test, options: KitOptions = {}): Promise<Kit> {
  resetKitConfig()
  const dir = tempDir()
  const app = Fastify({ logger: { level: process.env.TEST_LOG_LEVEL ?? 'error' } })
  await app.register(kitPlugin, {
    appId: APP_ID,
    masterKey: MASTER_KEY,
    dataDir: path.join(dir, 'postgres'),
    ephemeralDatabase: true,
    ...options
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const { port } = app.server.address() as { port: number }
  const origin = `http://127.0.0.1:${port}`
  return { app, origin, request: (method, url, init) => httpRequest(origin, method, url, init) }
}

export async function httpRequest (origin: string, method: string, url: string, init: { headers?: Record<string, string>, body?: unknown, contentType?: string } = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...init.headers }
  let body: string | undefined
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body)
    headers['content-type'] = init.contentType ?? 'application/json'
  }
  const response = await fetch(origin + url, { method, headers, body })
  const text = await response.text()
  let json: unknown
  try { json = text ? JSON.parse(text) : undefined } catch { json = undefined }
  return { status: response.status, headers: response.headers, text, json }
}

export const appHeaders = { 'x-parse-application-id': APP_ID }
export const masterHeaders = { ...appHeaders, 'x-parse-master-key': MASTER_KEY }
