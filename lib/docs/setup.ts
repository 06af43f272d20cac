// setupSwagger(app, config, path = '/api-docs'): the OpenAPI 3.0 document at
// GET {path}/json, and Swagger UI at GET {path} when @fastify/swagger-ui is
// installed (otherwise one warning, and that path answers 404).
import type { FastifyInstance } from 'fastify'
import { getKitConfig } from '../config.js'
import { collectRoutes, findCollector } from './collector.js'
import { completeDocument, documentSource } from './document.js'
import { resolveDocsPath, resolveSwaggerConfig, type SwaggerConfig } from './options.js'
import { loadSwaggerUi, SWAGGER_UI_PACKAGE } from './ui.js'
import { checkOperationIds } from './operation-ids.js'
import { declaredFunctions } from '../routing/registry.js'
import { DocsOptionInvalidError } from '../errors.js'

export async function setupSwagger (fastify: FastifyInstance, config: SwaggerConfig, path?: string): Promise<void> {
  const docsPath = resolveDocsPath(path)
  const mountPath = fastify.hasDecorator('kit') ? fastify.kit.options.mountPath : getKitConfig().mountPath
  const resolved = resolveSwaggerConfig(config, mountPath)

  // kitPlugin installed the collector before its routes; on its own, setupSwagger
  // documents the routes added after this call.
  const collector = findCollector(fastify) ?? await collectRoutes(fastify)
  if (collector.external) {
    throw new DocsOptionInvalidError('setupSwagger: @fastify/swagger was already registered by the application, so setupSwagger cannot document the declared functions. ' +
      'Remove that registration (setupSwagger registers @fastify/swagger itself) or serve your own setup without setupSwagger.')
  }
  collector.completeWith((routeDocument) => completeDocument(routeDocument, resolved))
  // Two functions with one operationId fail the boot, not the first request for the document.
  // Under kitPlugin, the functions its routes serve (the list is not built a second time).
  fastify.addHook('onReady', async () => { checkOperationIds(fastify.hasDecorator('kit') ? fastify.kit.functions : declaredFunctions()) })
  const document = documentSource(collector, resolved)

  const ui = await loadSwaggerUi()
  await fastify.register(async (scope) => {
    if (ui) {
      await scope.register(ui, {
        routePrefix: docsPath,
        transformSpecification: () => document(),
        transformSpecificationClone: false,
        uiConfig: { docExpansion: 'list', deepLinking: true, displayRequestDuration: true },
        theme: { title: resolved.title }
      })
    } else {
      scope.get(`${docsPath}/json`, { schema: { hide: true } }, async () => document())
    }
  })
  if (!ui) {
    fastify.log.warn(`${SWAGGER_UI_PACKAGE} is not installed: GET ${docsPath} (Swagger UI) answers 404; the OpenAPI document is served at GET ${docsPath}/json. Install ${SWAGGER_UI_PACKAGE} for the browser UI.`)
  }
}
