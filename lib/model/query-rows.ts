// queryRows: a Parse.Query run by Parse Server's own query engine in-process,
// answering plain rows as Parse's REST API would — without turning each row
// into a Parse.Object and back. The caller's ACLs, class-level permissions,
// protected fields and find triggers all apply, exactly as on REST.
import Parse from 'parse/node'
import { AuthModule, RestQuery } from '../parse/internals.js'
import { adapterRead } from '../parse/adapter-read.js'
import { parseConfig, schemaMemo } from '../access/parse-config.js'
import { withOneSchemaLoad } from '../parse/one-schema-load.js'

export interface QueryRowsResult<Row = Record<string, unknown>> {
  results: Row[]
  count?: number
}

/** Who runs the query: what a handler receives (master key, session user, or nobody). */
export interface QueryCaller { master: boolean, user?: Parse.User, installationId?: string }

export async function queryRows<Row = Record<string, unknown>> (query: Parse.Query, caller: QueryCaller, options: { count: true }): Promise<Required<QueryRowsResult<Row>>>
export async function queryRows<Row = Record<string, unknown>> (query: Parse.Query, caller: QueryCaller, options?: { count?: boolean }): Promise<QueryRowsResult<Row>>
export async function queryRows<Row = Record<string, unknown>> (query: Parse.Query, caller: QueryCaller, options: { count?: boolean } = {}): Promise<QueryRowsResult<Row>> {
  // One schema load for the whole query (find, count, protected fields) instead of one per step,
  // and none while Parse's schema cache is unchanged since an earlier read's.
  const config = withOneSchemaLoad(parseConfig(Parse.CoreManager.get('APPLICATION_ID')), { memo: schemaMemo() })
  const auth = caller.master
    ? AuthModule.master(config)
    : caller.user
      ? new AuthModule.Auth({ config, isMaster: false, user: caller.user, installationId: caller.installationId })
      : AuthModule.nobody(config)
  const { where, ...restOptions } = query.toJSON() as { where: Record<string, unknown>, [option: string]: unknown }
  if (options.count) restOptions.count = 1
  // A plain read (plain fields, a plain grant, no find trigger) straight from Parse's storage adapter; anything else through RestQuery.
  const plain = await adapterRead(config, auth, { className: query.className, where, options: restOptions })
  if (plain) return plain as QueryRowsResult<Row>
  const rest = await RestQuery({
    method: RestQuery.Method.find,
    config,
    auth,
    className: query.className,
    restWhere: where,
    restOptions,
    context: {}
  })
  return await rest.execute() as QueryRowsResult<Row>
}
