// Distance queries ($nearSphere, $centerSphere, $maxDistance…) run on PostGIS
// functions in Parse's PostgreSQL adapter. Without the extension PostgreSQL
// answers `type "geometry" does not exist` and Parse would answer 500; the
// caller gets a 400 that says what is missing and how to get it instead.
import Parse from 'parse/node'

export const POSTGIS_MISSING = 'Geo queries by distance ($nearSphere, $centerSphere; near / withinKilometers / withinRadians in the SDK) need the PostGIS extension, ' +
  'which this PostgreSQL does not have (the embedded PostgreSQL never has it). Point DATABASE_URI at a PostgreSQL with PostGIS ' +
  '(e.g. the Debian package postgresql-15-postgis-3, then CREATE EXTENSION postgis as a superuser). $box and $polygon work without it.'

/** Rethrows a "PostGIS is not installed" error as a clear Parse error; other errors unchanged. */
export function explainMissingPostgis (error: unknown): never {
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  // 42704 undefined_object (type geometry), 42883 undefined_function (ST_DistanceSphere).
  if ((code === '42704' || code === '42883') && typeof message === 'string' && /geometry|st_distancesphere|st_dwithin/i.test(message)) {
    throw new Parse.Error(Parse.Error.INVALID_QUERY, POSTGIS_MISSING)
  }
  throw error
}
