/** What per-IP limits count by: an IPv4 address, an IPv6 /64. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientNetwork } from '../src/domain/client-network.ts';

test('IPv6 addresses count by their /64, however they are written', () => {
  for (const [ip, network] of [
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:0:0:8', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:0:0:0:1', '2001:db8:1:2::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ]) {
    assert.equal(clientNetwork(ip as string), network, ip);
  }
});

test('IPv4 addresses, also when a dual-stack socket reports them mapped, are themselves', () => {
  assert.equal(clientNetwork('192.0.2.5'), '192.0.2.5');
  assert.equal(clientNetwork('::ffff:192.0.2.5'), '192.0.2.5');
  assert.equal(clientNetwork('::ffff:c000:205'), '192.0.2.5');
});

test('anything else is counted as given', () => {
  assert.equal(clientNetwork('not an address'), 'not an address');
});
