// The role cache: every reader applies its own maximum age (a function's
// roleCacheMs), whoever filled the entry; evictions win over loads in flight.
// Ages are read from a mocked clock (node:test's mock.timers): no test waits.
import t from 'tap'
import { mock } from 'node:test'
import { cachedRoles, configureRoleCache, evictRoles, invalidateRoles, suspendRoleCache } from '../lib/access/role-cache.js'

t.afterEach(() => {
  suspendRoleCache(false)
  configureRoleCache(false)
})

t.test('a short roleCacheMs holds even after a long one filled the entry', async (t) => {
  mock.timers.enable({ apis: ['Date'], now: 1_000_000 })
  t.teardown(() => mock.timers.reset())
  let stored = ['Admin']
  const load = async () => stored
  t.same(await cachedRoles('u1', load, 60_000), ['Admin'], 'a 60 s endpoint caches the roles')
  stored = []
  mock.timers.tick(999)
  t.same(await cachedRoles('u1', load, 1_000), ['Admin'], 'a 1 s endpoint still takes roles 999 ms old')
  mock.timers.tick(101)
  t.same(await cachedRoles('u1', load, 60_000), ['Admin'], 'the 60 s endpoint still answers from its cache')
  t.same(await cachedRoles('u1', load, 1_000), [], 'a 1 s endpoint refuses roles older than 1 s')
  t.same(await cachedRoles('u1', load, 60_000), [], 'and its fresh read serves the others too')
})

t.test('the configured ttl ends: a read past it loads again', async (t) => {
  mock.timers.enable({ apis: ['Date'], now: 2_000_000 })
  t.teardown(() => mock.timers.reset())
  configureRoleCache({ ttlMs: 60_000 })
  let loads = 0
  const load = async () => { loads++; return ['Editor'] }
  await cachedRoles('u5', load)
  mock.timers.tick(59_999)
  await cachedRoles('u5', load)
  t.equal(loads, 1, 'within the ttl: the cached roles')
  mock.timers.tick(1)
  await cachedRoles('u5', load)
  t.equal(loads, 2, 'at the ttl: loaded again')
})

t.test('the configured ttl applies to functions without roleCacheMs; 0 never reads the cache', async (t) => {
  configureRoleCache({ ttlMs: 60_000 })
  let loads = 0
  const load = async () => { loads++; return ['Editor'] }
  await cachedRoles('u2', load)
  await cachedRoles('u2', load)
  t.equal(loads, 1, 'one load for two reads within the ttl')
  await cachedRoles('u2', load, 0)
  t.equal(loads, 2, 'roleCacheMs 0 loads')
  invalidateRoles('u2')
  await cachedRoles('u2', load)
  t.equal(loads, 3, 'invalidateRoles drops the entry')
})

t.test('an eviction during a load keeps that load out of the cache', async (t) => {
  configureRoleCache({ ttlMs: 60_000 })
  let release!: () => void
  const slow = () => new Promise<string[]>((resolve) => { release = () => resolve(['Admin']) })
  const pending = cachedRoles('u3', slow)
  await Promise.resolve() // the load has started
  evictRoles({ userIds: ['u3'] })
  release()
  t.same(await pending, ['Admin'], 'the caller still gets what it read')
  let loads = 0
  t.same(await cachedRoles('u3', async () => { loads++; return [] }), [], 'the next read goes to the role graph')
  t.equal(loads, 1)
})

t.test('while suspended nothing is read from or stored in the cache', async (t) => {
  configureRoleCache({ ttlMs: 60_000 })
  await cachedRoles('u4', async () => ['Admin'])
  suspendRoleCache(true)
  let loads = 0
  const load = async () => { loads++; return [] }
  t.same(await cachedRoles('u4', load), [], 'suspended: the entry is not used')
  await cachedRoles('u4', load)
  t.equal(loads, 2, 'and nothing is stored')
  suspendRoleCache(false)
  await cachedRoles('u4', load)
  await cachedRoles('u4', load)
  t.equal(loads, 3, 'caching resumes afterwards')
})
