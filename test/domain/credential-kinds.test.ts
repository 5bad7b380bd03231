import assert from 'node:assert/strict';
import { test } from 'node:test';
import { credentialKinds, kindLabel, kindsWhere } from '../../src/domain/credential-kinds.ts';

test('the table has one row per kind, in the order sandbox, public_test, live, session', () => {
  assert.deepEqual(Object.keys(credentialKinds), ['sandbox', 'public_test', 'live', 'session']);
});

test('kindsWhere lists the kinds whose row sets the flag', () => {
  assert.deepEqual(kindsWhere('p0Only'), ['sandbox', 'public_test']);
  assert.deepEqual(kindsWhere('notional'), ['public_test']);
  assert.deepEqual(kindsWhere('baseTierOnly'), ['sandbox']);
  assert.deepEqual(kindsWhere('ipFence'), ['sandbox']);
  assert.deepEqual(kindsWhere('limitedPerAccount'), ['public_test', 'session']);
  assert.deepEqual(kindsWhere('mayExport'), ['live', 'session']);
  assert.deepEqual(kindsWhere('grandfathered'), ['session']);
  assert.deepEqual(kindsWhere('managesAccount'), ['session']);
});

test('each kind counts against its own limits: sandbox and public_test theirs, the rest the wallet', () => {
  assert.deepEqual(
    Object.values(credentialKinds).map((policy) => policy.limits),
    ['sandbox', 'public_test', 'wallet', 'wallet'],
  );
});

test('kindLabel names a kind in a sentence, capitalised at its start', () => {
  assert.equal(kindLabel('sandbox'), 'a sandbox key');
  assert.equal(kindLabel('public_test', true), 'A public-test key');
  assert.equal(kindLabel('live', true), 'A wallet key');
  assert.equal(kindLabel('session'), 'a session');
});
