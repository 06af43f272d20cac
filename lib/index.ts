// The public API of fastify-parse-kit.
export { kitPlugin, type KitOptions, type KitRuntime } from '../plugin.js'
export { configureKit, getKitConfig, type KitConfig } from './config.js'
export { CONFLICT, CONFLICT_MESSAGE } from './errors.js'
export { AUTH_ROUTES, type AllowedRoute } from './access/restriction.js'
