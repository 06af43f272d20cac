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
  /** Signs a user up over REST (in-process SDK sign-ups get no session token) and returns its id and session token. */
  signUp (username: string): Promise<{ id: string, token: string }>
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
  const request: Kit['request'] = (method, url, init) => httpRequest(origin, method, url, init)
  const signUp: Kit['signUp'] = async (username) => {
    const mount = app.kit.options.mountPath === '/' ? '' : app.kit.options.mountPath
    const credentials = { username, password: `${username}-password-1` }
    // The master key passes route restriction; a master sign-up opens no session, so log in after it.
    const created = await request('POST', `${mount}/users`, { headers: masterHeaders, body: credentials })
    if (created.status !== 201) throw new Error(`sign-up of ${username} failed: ${created.text}`)
    const login = await request('POST', `${mount}/login`, { headers: masterHeaders, body: credentials })
    if (login.status !== 200 || !login.json.sessionToken) throw new Error(`login of ${username} failed: ${login.text}`)
    return { id: created.json.objectId, token: login.json.sessionToken }
  }
  return { app, origin, request, signUp }
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
