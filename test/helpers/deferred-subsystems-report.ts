// Shared by test/deferred-subsystems.test.ts and the process it starts (deferred-subsystems-node.ts).

/** Marks the child's report line on stdout. */
export const DEFERRED_REPORT_MARK = 'DEFERRED_SUBSYSTEMS '

/** Packages the deferred subsystems bring in, by a folder in their files' paths. */
export const DEFERRED_PACKAGES = ['/node_modules/@apollo/server/', '/node_modules/@graphql-tools/', '/node_modules/mongodb/', '/node_modules/bson/', '/node_modules/@redis/client/', '/node_modules/ldapjs/', '/node_modules/node-forge/', '/node_modules/graphql/', '/node_modules/prom-client/', '/node_modules/jose/', '/node_modules/jwks-rsa/', '/node_modules/yaml/', '/node_modules/cron-parser/', '/node_modules/luxon/',
  '/node_modules/otpauth/', '/node_modules/express-rate-limit/', '/node_modules/ip-address/', '/node_modules/mustache/', '/node_modules/bcryptjs/',
  '/node_modules/crypto-js/', '/parse-server/lib/Security/CheckGroups/',
  // Both copies of ws: the Parse SDK's own and the kit's (its LiveQuery sockets, loaded with the liveQuery option only).
  '/node_modules/ws/']
