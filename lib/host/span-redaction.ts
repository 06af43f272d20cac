// Secrets out of span attributes, with the list that keeps them out of logs
// (server-options.ts SECRET_KEYS). Two places carry them:
// - request URLs (`url.path`, `url.query`, `url.full`, `http.target`, `http.url`):
//   `GET /login?username=…&password=…` — the values of secret query keys are replaced;
// - SQL text (`db.query.text`, `db.statement`): Parse's PostgreSQL adapter formats
//   values into its statements, so a session lookup carries the token and a
//   sign-up the password hash. A statement that names a secret column has every
//   string literal replaced (the values of one row sit far from their column
//   names in an INSERT, so "the literal after the column" would miss them);
//   statements about anything else keep their literals. MongoDB's statements are
//   JSON, with their values under the instrumentation's enhancedDatabaseReporting:
//   the same rule, for JSON string values.
import { CENSOR, SECRET_KEYS, redactUrl } from './server-options.js'

/** Storage columns Parse keeps secrets in, beside the request keys of SECRET_KEYS. */
const SECRET_COLUMNS = /^(_hashed_password|_password_history|_perishable_token|_perishable_token_expires_at|_email_verify_token|_email_verify_token_expires_at|_session_token|_auth_data_.+|_wperm_token)$/i

const URL_ATTRIBUTES = new Set(['url.path', 'url.full', 'http.target', 'http.url'])
const SQL_ATTRIBUTES = new Set(['db.query.text', 'db.statement'])
/** Parameter values some instrumentations record beside the statement. */
const SQL_VALUE_ATTRIBUTES = /^(db\.postgresql\.values|db\.query\.parameter\..+)$/

type AttributeValue = unknown

/** The attributes with secrets replaced; the same object when none is found. */
export function redactSpanAttributes<T extends Record<string, AttributeValue>> (attributes: T): T {
  let copy: Record<string, AttributeValue> | undefined
  const set = (key: string, value: AttributeValue) => {
    copy ??= { ...attributes }
    copy[key] = value
  }
  const secretSql = Object.entries(attributes).some(([key, value]) => SQL_ATTRIBUTES.has(key) && typeof value === 'string' && namesSecretColumn(value))
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value === 'string' && URL_ATTRIBUTES.has(key)) {
      const redacted = redactUrl(value)
      if (redacted !== value) set(key, redacted)
    } else if (typeof value === 'string' && key === 'url.query') {
      const redacted = redactUrl(`?${value}`).slice(1)
      if (redacted !== value) set(key, redacted)
    } else if (secretSql && typeof value === 'string' && SQL_ATTRIBUTES.has(key)) {
      // MongoDB's statements are JSON (with their values under enhancedDatabaseReporting).
      set(key, value.trimStart().startsWith('{') ? redactJsonStrings(value) : redactSqlLiterals(value))
    } else if (secretSql && SQL_VALUE_ATTRIBUTES.test(key)) {
      set(key, CENSOR)
    }
  }
  return (copy ?? attributes) as T
}

/** True when a statement names a column (quoted or not) on the secrets list. */
export function namesSecretColumn (sql: string): boolean {
  for (const match of sql.matchAll(/"((?:[^"]|"")+)"|\b([A-Za-z_][A-Za-z0-9_]*)\b/g)) {
    const name = (match[1] ?? match[2]).replace(/""/g, '"')
    if (SECRET_KEYS.test(name) || SECRET_COLUMNS.test(name)) return true
  }
  return false
}

/** Every "…" string value of a JSON text replaced; keys (a string followed by a colon) kept. */
export function redactJsonStrings (json: string): string {
  return json.replace(/"(?:[^"\\]|\\.)*"(\s*:)?/g, (string, colon?: string) => colon ? string : `"${CENSOR}"`)
}

/** Every '…' string literal (doubled quotes inside) replaced. */
export function redactSqlLiterals (sql: string): string {
  return sql.replace(/'(?:[^']|'')*'/g, `'${CENSOR}'`)
}

interface SpanLike { readonly attributes: Record<string, AttributeValue> }
interface SpanExporterLike<S extends SpanLike, R> {
  export (spans: S[], resultCallback: (result: R) => void): void
  shutdown (): Promise<void>
  forceFlush? (): Promise<void>
}

/**
 * Wraps an OpenTelemetry span exporter so that no span it sends carries a
 * secret: `new BatchSpanProcessor(redactingSpanExporter(new OTLPTraceExporter()))`.
 * Wrapping the exporter (rather than adding a processor) holds whatever the
 * order of processors.
 */
export function redactingSpanExporter<S extends SpanLike, R> (exporter: SpanExporterLike<S, R>): SpanExporterLike<S, R> {
  return {
    export (spans, resultCallback) {
      exporter.export(spans.map(redactedSpan), resultCallback)
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve()
  }
}

/** The span itself when clean, else a view of it with other attributes (methods and fields come from the span). */
function redactedSpan<S extends SpanLike> (span: S): S {
  const attributes = redactSpanAttributes(span.attributes)
  if (attributes === span.attributes) return span
  return Object.create(span, { attributes: { value: attributes, enumerable: true } }) as S
}
