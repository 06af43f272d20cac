// Geo queries. On a PostgreSQL without PostGIS (the embedded one) distance
// queries answer a 400 that names the missing extension, on Parse's routes and
// on declared endpoints alike; on a PostgreSQL with PostGIS they work.
import t from 'tap'
import Parse from 'parse/node'
import { BaseModel, CloudFunction, ParseClass, ParseField, Route, asCaller, type CloudRequest } from '../lib/index.js'
import { appHeaders, lane, masterHeaders, startKit, type Kit } from './helpers/kit.js'
import { postgisCluster, postgisMissing } from './helpers/postgis.js'

@ParseClass('Spot')
class Spot extends BaseModel {
  @ParseField({ type: 'String' }) declare name: string
  @ParseField({ type: 'GeoPoint' }) declare location: Parse.GeoPoint
}

@Route(Spot)
export class SpotFunctions {
  @CloudFunction({ methods: ['GET'] })
  static async nearby (request: CloudRequest) {
    const here = new Parse.GeoPoint(Number(request.params.latitude), Number(request.params.longitude))
    const spots = await new Parse.Query(Spot).withinKilometers('location', here, 50).find(asCaller(request))
    return spots.map((spot) => spot.name)
  }
}

const open = { allowedRoutes: [{ path: '/classes/*' }] }
const berlin = { __type: 'GeoPoint', latitude: 52.52, longitude: 13.405 }
const where = (condition: object) => `/parse/classes/Spot?where=${encodeURIComponent(JSON.stringify({ location: condition }))}`
const nearSphere = where({ $nearSphere: berlin, $maxDistance: 0.01 })
const centerSphere = where({ $geoWithin: { $centerSphere: [[13.405, 52.52], 0.01] } })
const box = where({ $within: { $box: [{ __type: 'GeoPoint', latitude: 52, longitude: 13 }, { __type: 'GeoPoint', latitude: 53, longitude: 14 }] } })

async function seed (kit: Kit): Promise<void> {
  for (const [name, latitude, longitude] of [['Mitte', 52.52, 13.405], ['Potsdam', 52.39, 13.06], ['Hamburg', 53.55, 9.99]] as const) {
    const saved = await kit.request('POST', '/parse/classes/Spot', { headers: masterHeaders, body: { name, location: { __type: 'GeoPoint', latitude, longitude } } })
    if (saved.status !== 201) throw new Error(saved.text)
  }
}

const names = (json: { results: Array<{ name: string }> }) => json.results.map((row) => row.name).sort()

t.test('without PostGIS: distance queries answer 400 naming the extension', { skip: lane.kind === 'postgres' ? false : 'the embedded PostgreSQL case (the MongoDB stand-in has no geo queries)' }, async (t) => {
  t.ok(Spot && SpotFunctions)
  const kit = await startKit(t, open)
  await seed(kit)
  for (const [label, url] of [['$nearSphere', nearSphere], ['$centerSphere', centerSphere]]) {
    const answer = await kit.request('GET', url, { headers: appHeaders })
    t.equal(answer.status, 400, `${label}: ${answer.text}`)
    t.match(answer.json, { code: Parse.Error.INVALID_QUERY, error: /need the PostGIS extension.*postgresql-15-postgis-3.*CREATE EXTENSION postgis/ })
  }
  const endpoint = await kit.request('GET', '/parse/spots/nearby?latitude=52.52&longitude=13.405', { headers: appHeaders })
  t.equal(endpoint.status, 400, `declared endpoint: ${endpoint.text}`)
  t.match(endpoint.json, { code: Parse.Error.INVALID_QUERY, error: /PostGIS/ })
  const boxed = await kit.request('GET', box, { headers: appHeaders })
  t.equal(boxed.status, 200, '$box needs no PostGIS')
  t.same(names(boxed.json), ['Mitte', 'Potsdam'])
})

t.test('with PostGIS: distance queries work', { skip: lane.kind === 'postgres' ? postgisMissing() : 'a PostgreSQL case' }, async (t) => {
  const databaseURI = await postgisCluster(t)
  const kit = await startKit(t, { ...open, databaseURI })
  t.equal(kit.app.kit.database.embedded, false)
  await seed(kit)
  const near = await kit.request('GET', nearSphere, { headers: appHeaders })
  t.equal(near.status, 200, near.text)
  t.same(near.json.results.map((row: { name: string }) => row.name), ['Mitte', 'Potsdam'], 'nearest first, within 0.01 radians (~64 km)')
  const within = await kit.request('GET', centerSphere, { headers: appHeaders })
  t.equal(within.status, 200, within.text)
  t.same(names(within.json), ['Mitte', 'Potsdam'])
  const endpoint = await kit.request('GET', '/parse/spots/nearby?latitude=52.52&longitude=13.405', { headers: appHeaders })
  t.equal(endpoint.status, 200, endpoint.text)
  t.same(endpoint.json.sort(), ['Mitte', 'Potsdam'], 'withinKilometers on a declared endpoint')
})
