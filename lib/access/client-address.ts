// The client address a rate limit counts by. One IPv6 client is usually given a
// whole /64 (2^64 addresses) and may send each request from a new one, so an
// IPv6 address counts by its /64; an IPv4 address (IPv4-mapped ones included)
// counts as itself.
import { isIPv6 } from 'node:net'

/** `request.ip` as a rate-limit key: IPv6 by its /64 prefix (`2001:db8:0:1::/64`), anything else as given. */
export function rateLimitAddress (ip: string): string {
  const address = ip.split('%')[0] // a zone index (fe80::1%eth0) names the interface, not the client
  if (!isIPv6(address) || /^::ffff:/i.test(address) || address.includes('.')) return ip
  const [head, tail] = address.split('::')
  const front = head ? head.split(':') : []
  const back = tail === undefined ? [] : tail ? tail.split(':') : []
  const groups = tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back]
  return `${groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(':')}::/64`
}
