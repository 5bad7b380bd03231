/**
 * What per-IP limits count by. An IPv4 address is one client. An IPv6 client usually holds a whole /64
 * (one address per device, new ones at will), so counting by full address would let it mint a new
 * "client" per request: IPv6 addresses count by their /64. An IPv4-mapped IPv6 address (::ffff:a.b.c.d,
 * what a dual-stack socket reports) is its IPv4 address. Forwarded addresses (TRUST_PROXY) come as the
 * proxy wrote them: a port or brackets are dropped, and anything that is not an address is one client.
 */
import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address, or null if it is not one. */
function groupsOf(address: string): number[] | null {
  if (!isIPv6(address)) return null;
  // A zone id (fe80::1%eth0) names no other client; a dotted IPv4 tail is two groups written otherwise.
  const text = (address.split('%')[0] as string).replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) =>
    [((Number(a) << 8) | Number(b)).toString(16), ((Number(c) << 8) | Number(d)).toString(16)].join(':'),
  );
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = parse(head);
  if (rest === undefined) return left.length === 8 ? left : null;
  const right = parse(rest);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * A forwarded address as some proxies write it: with a port (`192.0.2.5:443`, `[2001:db8::1]:443`) or in
 * brackets. The port and brackets are dropped: a client picks a new port per connection.
 */
function bareAddress(value: string): string {
  const trimmed = value.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(trimmed);
  if (bracketed) return bracketed[1] as string;
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(trimmed);
  return withPort ? (withPort[1] as string) : trimmed;
}

/** What a value that is no IP address at all counts as: one client, so inventing values gains nothing. */
const UNKNOWN_NETWORK = 'unknown';

export function clientNetwork(value: string): string {
  const ip = bareAddress(value);
  if (isIPv4(ip)) return ip;
  const groups = groupsOf(ip);
  if (!groups) return UNKNOWN_NETWORK;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi, lo] = [groups[6] as number, groups[7] as number];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** What per-IP counters are keyed by: a salted digest of the client's network, never the raw address. */
export function networkDigest(salt: string, clientIp: string): string {
  return createHash('sha256')
    .update(`${salt}:${clientNetwork(clientIp)}`)
    .digest('hex');
}
