// Names for `fpk g`: the class name is checked once here, and everything
// derived from it (route prefix, method names, file names) comes from the same
// rules the kit applies at boot.
import pluralize from 'pluralize'
import { checkPrefix, kebabPlural } from '../lib/routing/naming.js'
import { CliError } from './context.js'

const PASCAL_CASE = /^[A-Z][A-Za-z0-9]*$/
/** PostgreSQL's identifier length (NAMEDATALEN - 1): a longer table name is cut, silently, in every statement. */
const MAX_CLASS_NAME = 63

/** Parse Server's own classes, which a model may not redeclare. */
const PARSE_CLASSES: Record<string, string> = {
  User: '_User',
  Role: '_Role',
  Session: '_Session',
  Installation: '_Installation'
}

/** Identifiers the generated files import or declare: a class of the same name would not compile (Type, Static, Deleted did not). */
const IMPORTED_BY_TEMPLATES = new Set(['Parse', 'BaseModel', 'BeforeSave', 'ParseClass', 'ParseField', 'CloudFunction', 'Route', 'CloudRequest', 'Type', 'Static', 'Deleted'])

/** Keywords, and the local names the resource template already uses. */
const UNUSABLE_VARIABLES = new Set([
  'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum',
  'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'implements', 'import', 'in', 'instanceof', 'interface',
  'let', 'new', 'null', 'package', 'private', 'protected', 'public', 'return', 'static', 'super', 'switch', 'this', 'throw',
  'true', 'try', 'typeof', 'var', 'void', 'while', 'with', 'yield', 'arguments', 'eval', 'undefined',
  'request', 'changes', 'field', 'editable', 'query', 'limit', 'results', 'count', 'owner'
])

export interface ResourceNames {
  /** Product */
  name: string
  /** product */
  camel: string
  /** The local variable holding one record in generated code: the camel name, unless that is a keyword or a name the template uses. */
  variable: string
  /** Products (Person → People): used in listProducts */
  plural: string
  /** products: the route prefix the kit derives from the class (@Route(Product)) */
  prefix: string
  methods: { create: string, list: string, get: string, update: string, delete: string }
}

/** `routed`: the names serve endpoints (g resource, g functions), so the route prefix must be one the kit accepts; a model alone has none. */
export function resourceNames (input: string, routed = true): ResourceNames {
  const name = input.trim()
  if (name.startsWith('_')) {
    throw new CliError(`"${name}" is reserved: class names starting with "_" belong to Parse Server (_User, _Role, _Session, _Installation, …). Choose another name.`)
  }
  if (!PASCAL_CASE.test(name)) {
    const suggestion = pascalCase(name)
    const hint = suggestion && suggestion !== name && PASCAL_CASE.test(suggestion) ? ` Did you mean ${suggestion}?` : ''
    throw new CliError(`"${name}" is not a PascalCase name: it must start with an uppercase letter followed by letters and digits only (e.g. Product, OrderLine).${hint}`)
  }
  if (name.length > MAX_CLASS_NAME) {
    throw new CliError(`"${name.slice(0, 24)}…" has ${name.length} characters: PostgreSQL keeps the first ${MAX_CLASS_NAME} of a table's name, so two classes alike that far would share one table. Choose a name of ${MAX_CLASS_NAME} characters or fewer.`)
  }
  const parseClass = PARSE_CLASSES[name]
  if (parseClass) {
    throw new CliError(`"${name}" is reserved: it stands for Parse Server's built-in ${parseClass} class, which a model cannot redeclare. Choose another name (e.g. ${name}Profile).`)
  }
  if (IMPORTED_BY_TEMPLATES.has(name)) {
    throw new CliError(`"${name}" would clash with ${name}, which the generated files import or declare. Choose another name.`)
  }
  if (Object.prototype.hasOwnProperty.call(globalThis, name)) {
    throw new CliError(`"${name}" would shadow the JavaScript global ${name}. Choose another name.`)
  }
  const prefix = kebabPlural(name)
  try {
    if (routed) checkPrefix(prefix, name)
  } catch (error) {
    throw new CliError(`"${name}" cannot be a resource: ${(error as Error).message} (fpk g model ${name} makes the model alone)`)
  }
  const plural = pluralName(name)
  const camel = name[0].toLowerCase() + name.slice(1)
  return {
    name,
    camel,
    variable: UNUSABLE_VARIABLES.has(camel) ? `${camel}Record` : camel,
    plural,
    prefix,
    methods: {
      create: `create${name}`,
      list: `list${plural}`,
      get: `get${name}`,
      update: `update${name}`,
      delete: `delete${name}`
    }
  }
}

/** Pluralises the last word and keeps the case of the rest: OrderLine → OrderLines, Person → People. */
export function pluralName (name: string): string {
  const words = name.split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/)
  const last = words.pop()!
  return words.join('') + pluralize(last)
}

/** "order-line" / "order_line" / "orderLine" → "OrderLine"; undefined when nothing usable is left. */
function pascalCase (input: string): string | undefined {
  const words = input.split(/[^A-Za-z0-9]+/).filter(Boolean)
  if (words.length === 0) return undefined
  return words.map((word) => word[0].toUpperCase() + word.slice(1)).join('')
}

export interface JobNames {
  /** CleanupDrafts, as typed */
  name: string
  /** CleanupDraftsJob: the class holding the job */
  className: string
  /** cleanupDrafts: the method and the job's name in Parse */
  jobName: string
  /** cleanup-drafts: file names */
  kebab: string
}

/** Names for `fpk g job <Name>`: a trailing "Job" is not doubled (CleanupJob → class CleanupJob, job cleanup). */
export function jobNames (input: string): JobNames {
  const name = input.trim()
  if (!PASCAL_CASE.test(name)) {
    const suggestion = pascalCase(name)
    const hint = suggestion && suggestion !== name && PASCAL_CASE.test(suggestion) ? ` Did you mean ${suggestion}?` : ''
    throw new CliError(`"${name}" is not a PascalCase name: it must start with an uppercase letter followed by letters and digits only (e.g. CleanupDrafts, NightlyReport).${hint}`)
  }
  const base = name.length > 3 && name.endsWith('Job') ? name.slice(0, -3) : name
  const className = `${base}Job`
  if (IMPORTED_BY_TEMPLATES.has(className) || ['Job', 'Cron', 'JobRequest'].includes(base)) throw new CliError(`"${name}" would clash with a name the generated file imports. Choose another name.`)
  return {
    name: base,
    className,
    jobName: base[0].toLowerCase() + base.slice(1),
    kebab: base.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/([A-Z])([A-Z][a-z])/g, '$1-$2').toLowerCase()
  }
}
