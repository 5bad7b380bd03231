import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isFreeCredential } from '../../src/domain/caller.ts';
import { caller } from './support.ts';

test('sandbox and public-test keys are free credentials; live keys and sessions are not', () => {
  assert.deepEqual(
    (['sandbox', 'public_test', 'live', 'session'] as const).map((kind) => isFreeCredential(caller(kind))),
    [true, true, false, false],
  );
});
