// Rate limits against a client with many addresses: behind a trusted proxy an
// IPv6 client given a /64 could send each call from a new address, each with a
// fresh counter. Addresses count by their /64; IPv4 addresses as themselves.
import t from 'tap'
import { CloudFunction, Route } from '../lib/index.js'
import { rateLimitAddress } from '../lib/access/client-address.js'
import { appHeaders, startKit } from './helpers/kit.js'
import { sharedPostgres } from './helpers/shared-postgres.js'

@Route('limits')
class LimitedFunctions {
  @CloudFunction({ methods: ['POST'], rateLimit: { windowMs: 600_000, max: 2 } })
  static ping () { return { ok: true } }
}
void LimitedFunctions

t.test('the key an address counts under', async (t) => {
  t.equal(rateLimitAddress('2001:db8::1'), rateLimitAddress('2001:db8::ffff:2'), 'one /64, written two ways')
  t.equal(rateLimitAddress('2001:0db8:0000:0000:0000:0000:0000:0001'), '2001:db8:0:0::/64', 'leading zeros and the full form')
  t.not(rateLimitAddress('2001:db8:0:1::1'), rateLimitAddress('2001:db8::1'), 'the next /64 is another client')
  t.equal(rateLimitAddress('fe80::1%eth0'), 'fe80:0:0:0::/64', 'the zone index is dropped')
  t.equal(rateLimitAddress('10.0.0.1'), '10.0.0.1')
  t.equal(rateLimitAddress('::ffff:10.0.0.1'), '::ffff:10.0.0.1', 'an IPv4-mapped address is that IPv4 address')
})

t.test('a declared function\'s rate limit counts an IPv6 /64 as one client', async (t) => {
  const kit = await startKit(t, { ...await sharedPostgres(t) }, { trustProxy: true })
  const ping = (address: string) => kit.request('POST', '/parse/limits/ping', { headers: { ...appHeaders, 'x-forwarded-for': address }, body: {} })
  t.equal((await ping('2001:db8::1')).status, 200)
  t.equal((await ping('2001:db8::2')).status, 200)
  const third = await ping('2001:db8::3')
  t.equal(third.status, 429, `a third address of the /64 is the same client (${third.text.slice(0, 120)})`)
  t.equal((await ping('2001:db8:0:1::1')).status, 200, 'another /64 has its own counter')
  t.equal((await ping('10.0.0.1')).status, 200, 'IPv4 addresses count one by one')
  t.equal((await ping('10.0.0.2')).status, 200)
})
