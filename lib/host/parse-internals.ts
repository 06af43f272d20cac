// Parse Server modules the kit uses beyond the package's main export. Parse's
// modules require each other in cycles (Auth ↔ RestWrite): loading one of them
// first leaves the other holding a half-built module. Importing the package
// first keeps Parse's own load order; every deep import goes through here.
import 'parse-server'
import AuthModule from 'parse-server/lib/Auth.js'
import Config from 'parse-server/lib/Config.js'
import SchemaCache from 'parse-server/lib/Adapters/Cache/SchemaCache.js'
import { PostgresStorageAdapter } from 'parse-server/lib/Adapters/Storage/Postgres/PostgresStorageAdapter.js'
import { MongoStorageAdapter } from 'parse-server/lib/Adapters/Storage/Mongo/MongoStorageAdapter.js'
import { GridFSBucketAdapter } from 'parse-server/lib/Adapters/Files/GridFSBucketAdapter.js'

export { AuthModule, Config, SchemaCache, PostgresStorageAdapter, MongoStorageAdapter, GridFSBucketAdapter }
