// Parse Server modules the kit uses beyond the package's main export. Parse's
// modules require each other in cycles (Auth ↔ RestWrite): loading one of them
// first leaves the other holding a half-built module. Importing the package
// first keeps Parse's own load order; every deep import goes through here.
import './no-log-files.js' // before parse-server loads
import 'parse-server'
import AuthModule from 'parse-server/lib/Auth.js'
import Config from 'parse-server/lib/Config.js'
import RestQuery from 'parse-server/lib/RestQuery.js'
import rest from 'parse-server/lib/rest.js'
import SchemaCache from 'parse-server/lib/Adapters/Cache/SchemaCache.js'
import { PostgresStorageAdapter } from 'parse-server/lib/Adapters/Storage/Postgres/PostgresStorageAdapter.js'
import { MongoStorageAdapter } from 'parse-server/lib/Adapters/Storage/Mongo/MongoStorageAdapter.js'
import { GridFSBucketAdapter } from 'parse-server/lib/Adapters/Files/GridFSBucketAdapter.js'
import * as SchemaRules from 'parse-server/lib/Controllers/SchemaController.js'
import { getLogger as parseLogger } from 'parse-server/lib/logger.js'
import ParseBatch from 'parse-server/lib/batch.js'
import triggers from 'parse-server/lib/triggers.js'
import { RedisPubSub } from 'parse-server/lib/Adapters/PubSub/RedisPubSub.js'

/** How Parse's /batch turns an inner request's path into the path its router runs. */
export const makeBatchRoutingPathFunction = ParseBatch.makeBatchRoutingPathFunction

export { AuthModule, Config, RestQuery, rest, SchemaCache, PostgresStorageAdapter, MongoStorageAdapter, GridFSBucketAdapter, SchemaRules, parseLogger, triggers, RedisPubSub }
