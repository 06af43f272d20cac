// Parse Server's Express app, mounted under {mount} in its own encapsulated
// Fastify scope: it only sees requests no Fastify route claimed, and only
// after the app id check and route restriction let them through.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fastifyExpress from '@fastify/express'
import { readCredentials, secretsEqual } from '../access/credentials.js'
import { BLOCKED_MESSAGE, isRouteAllowed, type RestrictionPolicy } from '../access/restriction.js'
import { acceptTextPlainJson, replyWithParseShape } from './http.js'
import { keepKitCorsHeaders } from './cors.js'
import Parse from 'parse/node'

export interface MountOptions {
  app: (req: unknown, res: unknown, next: (error?: unknown) => void) => void
  mountPath: string
  appId: string
  masterKey: string
  policy: RestrictionPolicy
}

export async function mountParse (fastify: FastifyInstance, options: MountOptions): Promise<void> {
  await fastify.register(async (scope) => {
    acceptTextPlainJson(scope)
    // Anything else (file uploads, forms) stays an unread stream for Parse's own parsers.
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null))
    scope.setErrorHandler(replyWithParseShape)
    scope.addHook('preHandler', async (request, reply) => gate(request, reply, options))
    // Runs after the gate, with the body Fastify already parsed handed to Express.
    await scope.register(fastifyExpress, { expressHook: 'preHandler' })
    // Parse's allowCrossDomain would overwrite the kit's policy (or add one where cors is off).
    scope.use('/', keepKitCorsHeaders as never)
    scope.use('/', options.app)
    const unreachable = async (_request: FastifyRequest, reply: FastifyReply) => {
      // Parse answers every request it is given; reaching here means Express passed it on.
      return reply.code(404).send({ code: Parse.Error.OBJECT_NOT_FOUND, error: 'Not found' })
    }
    scope.all('/', unreachable)
    scope.all('/*', unreachable)
  }, { prefix: options.mountPath === '/' ? '' : options.mountPath })
}

async function gate (request: FastifyRequest, reply: FastifyReply, options: MountOptions): Promise<void> {
  const path = request.url.slice(options.mountPath === '/' ? 0 : options.mountPath.length) || '/'
  const credentials = readCredentials(request.headers, request.body)
  if (path.split('?')[0].replace(/\/+$/, '') === '/health') return
  if (credentials.appId !== options.appId) {
    return reply.code(403).send({ error: 'unauthorized' })
  }
  if (credentials.masterKey !== undefined && secretsEqual(credentials.masterKey, options.masterKey)) return
  const method = request.method === 'POST' && credentials.method ? credentials.method : request.method
  if (isRouteAllowed(method, path, options.policy)) return
  return reply.code(403).send({ code: Parse.Error.OPERATION_FORBIDDEN, error: BLOCKED_MESSAGE })
}
