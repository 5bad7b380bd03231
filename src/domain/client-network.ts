/**
 * What per-IP limits count by. An IPv4 address is one client. An IPv6 client usually holds a whole /64
 * (one address per device, new ones at will), so counting by full address would let it mint a new
 * "client" per request: IPv6 addresses count by their /64. An IPv4-mapped IPv6 address (::ffff:a.b.c.d,
 * what a dual-stack socket reports) is its IPv4 address.
 */
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

export function clientNetwork(ip: string): string {
  if (isIPv4(ip)) return ip;
  const groups = groupsOf(ip);
  if (!groups) return ip;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi, lo] = [groups[6] as number, groups[7] as number];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
