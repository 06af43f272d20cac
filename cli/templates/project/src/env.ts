// The application's settings, read from the environment (and .env, which
// server.ts loads first) in one place and checked at boot: a bad value stops
// the process with a message naming the variable, before anything starts.
import envSchema from 'env-schema'
import { EnvInvalidError } from 'fastify-parse-kit'

const SWITCH = { type: 'string', enum: ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'] } as const

const schema = {
  type: 'object',
  properties: {
    NODE_ENV: { type: 'string' },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 1337 },
    HOST: { type: 'string', default: '127.0.0.1' },
    LOG_LEVEL: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    APP_ID: { type: 'string' },
    MASTER_KEY: { type: 'string' },
    DATA_DIR: { type: 'string' },
    DATABASE_URI: { type: 'string', pattern: '^(postgres|postgresql|mongodb|mongodb\\+srv)://' },
    REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    TRUST_PROXY: { type: 'string' },
    ALLOW_AUTH_ROUTES: SWITCH,
    DOCS_ENABLED: SWITCH,
    DOCS_PATH: { type: 'string', pattern: '^/', default: '/api-docs' },
    SEED_ON_BOOT: SWITCH,
    ADMIN_USERNAME: { type: 'string', default: 'admin' },
    ADMIN_EMAIL: { type: 'string', default: 'admin@example.com' },
    ADMIN_PASSWORD: { type: 'string', default: '' },
    DASHBOARD_USER: { type: 'string' },
    DASHBOARD_PASS: { type: 'string' },
    METRICS: SWITCH,
    METRICS_TOKEN: { type: 'string' }, // the kit checks its length without printing it
    TRACING: SWITCH,
    CORS_ORIGIN: { type: 'string' },
    SHUTDOWN_DRAIN_MS: { type: 'integer', minimum: 0, maximum: 600000 }
  }
} as const

type Name = keyof typeof schema.properties
const SWITCHES = ['ALLOW_AUTH_ROUTES', 'DOCS_ENABLED', 'SEED_ON_BOOT', 'METRICS', 'TRACING'] as const satisfies readonly Name[]

export interface Env {
  production: boolean
  port: number
  host: string
  logLevel: string
  /** Unset: the project's name. */
  appId?: string
  /** Unset: a random key per run in development; production refuses to boot. */
  masterKey?: string
  dataDir?: string
  /** Unset: the embedded PostgreSQL (development only). */
  databaseURI?: string
  redisURL?: string
  /** true, false, or a proxy-addr list such as uniquelocal. */
  trustProxy: boolean | string
  /** Unset: the kit's default (closed). */
  allowAuthRoutes?: boolean
  /** Unset: on unless NODE_ENV=production. */
  docsEnabled: boolean
  docsPath: string
  /** Unset: on unless NODE_ENV=production. */
  seedOnBoot: boolean
  admin: { username: string, email: string, password: string }
  dashboard: { user?: string, pass?: string }
  /** Prometheus metrics at /metrics; off unless METRICS=true. */
  metrics: boolean
  /** Bearer token scrapes must send (the kit reads METRICS_TOKEN itself too). */
  metricsToken?: string
  /** OpenTelemetry spans; off unless TRACING=true (the SDK and exporter are set up in a file loaded first). */
  tracing: boolean
  /** Browser origins allowed to call the API; unset: any origin, as Parse Server. */
  corsOrigins?: string[]
  /** On SIGTERM, how long /health answers 503 while requests are still served; unset: the kit's default (5000 in production, 0 otherwise). */
  shutdownDrainMs?: number
}

/**
 * Validates and converts the variables; an empty value counts as unset (as
 * `KEY=` in .env). Switches take true/false (also 1/0, yes/no, on/off).
 */
export function loadEnv (source: NodeJS.ProcessEnv = process.env): Env {
  const data: Record<string, string> = {}
  for (const name of Object.keys(schema.properties) as Name[]) {
    const value = source[name]?.trim()
    if (value) data[name] = (SWITCHES as readonly string[]).includes(name) ? value.toLowerCase() : value
  }
  let raw: Record<Name, string | number | undefined>
  try {
    raw = envSchema({ schema, data, env: false }) // only the picked values above, not process.env again
  } catch (error) {
    const problems = (error as { errors?: SchemaError[] }).errors?.map((problem) => describe(problem, data)) ?? [(error as Error).message]
    throw new EnvInvalidError(`Invalid environment (.env or the process environment; .env.example lists every variable): ${problems.join('; ')}`)
  }
  const text = (name: Name) => raw[name] as string | undefined
  const production = text('NODE_ENV') === 'production'
  const trustProxy = text('TRUST_PROXY') ?? 'false'
  return {
    production,
    port: raw.PORT as number,
    host: text('HOST')!,
    logLevel: text('LOG_LEVEL')!,
    appId: text('APP_ID'),
    masterKey: text('MASTER_KEY'),
    dataDir: text('DATA_DIR'),
    databaseURI: text('DATABASE_URI'),
    redisURL: text('REDIS_URL'),
    trustProxy: trustProxy === 'true' ? true : trustProxy === 'false' ? false : trustProxy,
    allowAuthRoutes: toSwitch(text('ALLOW_AUTH_ROUTES')),
    docsEnabled: toSwitch(text('DOCS_ENABLED')) ?? !production,
    docsPath: text('DOCS_PATH')!,
    seedOnBoot: toSwitch(text('SEED_ON_BOOT')) ?? !production,
    admin: { username: text('ADMIN_USERNAME')!, email: text('ADMIN_EMAIL')!, password: text('ADMIN_PASSWORD')! },
    dashboard: { user: text('DASHBOARD_USER'), pass: text('DASHBOARD_PASS') },
    metrics: toSwitch(text('METRICS')) ?? false,
    metricsToken: text('METRICS_TOKEN'),
    tracing: toSwitch(text('TRACING')) ?? false,
    corsOrigins: text('CORS_ORIGIN')?.split(',').map((origin) => origin.trim()).filter(Boolean),
    shutdownDrainMs: raw.SHUTDOWN_DRAIN_MS as number | undefined
  }
}

interface SchemaError { instancePath: string, keyword?: string, message?: string, params: { allowedValues?: unknown[] } }

/** What a pattern asks, in words: a regular expression is no message. */
const PATTERN_RULES: Partial<Record<Name, string>> = {
  DATABASE_URI: 'must start with postgres://, postgresql://, mongodb:// or mongodb+srv://',
  REDIS_URL: 'must start with redis:// or rediss://',
  DOCS_PATH: 'must start with /'
}

/** "DOCS_ENABLED must be one of true, false, … (got "maybe")". */
function describe (problem: SchemaError, data: Record<string, string>): string {
  const name = problem.instancePath.replace(/^\//, '') as Name
  const rule = problem.params.allowedValues
    ? `must be one of ${problem.params.allowedValues.join(', ')}`
    : (problem.keyword === 'pattern' && PATTERN_RULES[name]) || problem.message
  return `${name} ${rule} (got ${JSON.stringify(withoutPassword(data[name]))})`
}

/** A connection string is shown with its password hidden. */
function withoutPassword (value: string | undefined): string | undefined {
  return value?.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@')
}

function toSwitch (value: string | undefined): boolean | undefined {
  return value === undefined ? undefined : ['true', '1', 'yes', 'on'].includes(value)
}
