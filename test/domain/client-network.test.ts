/** What per-IP limits count by: an IPv4 address, an IPv6 /64. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { clientNetwork, networkDigest } from '../../src/domain/client-network.ts';

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

test('a forwarded address with a port or brackets is the address; anything else is one client', () => {
  assert.equal(clientNetwork('192.0.2.5:1001'), '192.0.2.5');
  assert.equal(clientNetwork('[2001:db8:5:5::1]'), '2001:db8:5:5::/64');
  assert.equal(clientNetwork('[2001:db8:5:5::2]:443'), '2001:db8:5:5::/64');
  assert.equal(clientNetwork('[::ffff:192.0.2.5]:80'), '192.0.2.5');
  assert.equal(
    clientNetwork('not-an-ip-1'),
    clientNetwork('not-an-ip-2'),
    'invented values share one budget',
  );
  assert.equal(clientNetwork('unknown'), 'unknown');
});

test('per-IP counters are keyed by a salted digest of the network, never the address', () => {
  const digest = networkDigest('salt', '2001:db8:1:2::1');
  assert.equal(digest, createHash('sha256').update('salt:2001:db8:1:2::/64').digest('hex'));
  assert.equal(networkDigest('salt', '2001:db8:1:2::99'), digest, 'one /64 is one counter');
  assert.notEqual(networkDigest('other', '2001:db8:1:2::1'), digest, 'another salt, another key');
  assert.ok(!digest.includes('2001'));
});
