// The credentials a client sends, as OpenAPI security schemes, and which of
// them each declared function asks for. Schemes describe headers only: no key
// value is ever written into the document.
import { needsSession, type CloudFunctionOptions } from '../routing/options.js'

export type SecurityRequirement = Record<string, string[]>

export const SCHEME = {
  appId: 'appId',
  sessionToken: 'sessionToken',
  masterKey: 'masterKey',
  restApiKey: 'restApiKey'
} as const

export function securitySchemes (): Record<string, Record<string, string>> {
  return {
    [SCHEME.appId]: {
      type: 'apiKey',
      in: 'header',
      name: 'X-Parse-Application-Id',
      description: 'The application id; required on every request.'
    },
    [SCHEME.sessionToken]: {
      type: 'apiKey',
      in: 'header',
      name: 'X-Parse-Session-Token',
      description: 'A user\'s session token (from logging in); identifies the caller.'
    },
    [SCHEME.masterKey]: {
      type: 'apiKey',
      in: 'header',
      name: 'X-Parse-Master-Key',
      description: 'The master key: for trusted servers only. It passes every check, so never ship it to a client.'
    },
    [SCHEME.restApiKey]: {
      type: 'apiKey',
      in: 'header',
      name: 'X-Parse-REST-API-Key',
      description: 'The REST API key, required when the server is configured with one.'
    }
  }
}

/** Application id only; application id plus a session token or the master key; or the master key alone (requireMaster). */
export function functionSecurity (options: CloudFunctionOptions): SecurityRequirement[] {
  if (options.requireMaster === true) return [{ [SCHEME.appId]: [], [SCHEME.masterKey]: [] }]
  if (!needsSession(options)) return [{ [SCHEME.appId]: [] }]
  return [
    { [SCHEME.appId]: [], [SCHEME.sessionToken]: [] },
    { [SCHEME.appId]: [], [SCHEME.masterKey]: [] }
  ]
}

/** Adds the REST API key to each alternative (when the document says it is required). */
export function withRestApiKey (requirements: SecurityRequirement[]): SecurityRequirement[] {
  return requirements.map((requirement) => ({ ...requirement, [SCHEME.restApiKey]: [] }))
}
