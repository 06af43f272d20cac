// Swagger UI comes from @fastify/swagger-ui, an optional peer dependency:
// loaded when setupSwagger runs, and absent without harm.
import type { FastifyPluginAsync } from 'fastify'

export const SWAGGER_UI_PACKAGE = '@fastify/swagger-ui'

/** The options of @fastify/swagger-ui this kit passes. */
export interface SwaggerUiOptions {
  routePrefix: string
  transformSpecification: () => Record<string, unknown>
  transformSpecificationClone: boolean
  uiConfig: Record<string, unknown>
  theme?: { title?: string }
}

export type SwaggerUiPlugin = FastifyPluginAsync<SwaggerUiOptions>

/** The plugin, or undefined when the package is not installed. Any other failure to load it is an error. */
export async function loadSwaggerUi (): Promise<SwaggerUiPlugin | undefined> {
  try {
    const loaded = await import('@fastify/swagger-ui') as unknown as { default: SwaggerUiPlugin }
    return loaded.default
  } catch (error) {
    if (isNotInstalled(error)) return undefined
    throw error
  }
}

function isNotInstalled (error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  // Only the package itself missing; a missing dependency of an installed copy is a broken install.
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' && message.includes(`'${SWAGGER_UI_PACKAGE}'`)
}
