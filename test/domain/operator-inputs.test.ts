/** What an operator gives: token amounts in micros, caps, new accounts, and the operator token check. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  adminTokenMatches,
  capAmount,
  creditKinds,
  idempotencyKeyPattern,
  MAX_CREDIT_TOKENS,
  newAccountInput,
  tokenAmount,
} from '../../src/domain/operator-inputs.ts';

const messages = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.error?.issues.map((i) => i.message) ?? [];

test('a token amount is an integer or a decimal of at most 6 places, kept in micros', () => {
  assert.equal(tokenAmount.parse(5), 5_000_000n);
  assert.equal(tokenAmount.parse('1.5'), 1_500_000n);
  assert.equal(tokenAmount.parse('0.000001'), 1n);
  assert.equal(tokenAmount.parse(String(MAX_CREDIT_TOKENS)), 1_000_000_000_000_000n);
  assert.deepEqual(messages(tokenAmount.safeParse('0')), ['must be more than 0']);
  assert.deepEqual(messages(tokenAmount.safeParse('1000000000.000001')), [
    'must be at most 1000000000 tokens',
  ]);
  assert.ok(
    messages(tokenAmount.safeParse('1.1234567')).includes('must be a decimal with at most 6 decimals'),
  );
  assert.equal(tokenAmount.safeParse(-1).success, false);
  assert.equal(tokenAmount.safeParse(1.5).success, false);
});

test('a cap is a token amount, or null to remove it', () => {
  assert.equal(capAmount.parse(null), null);
  assert.equal(capAmount.parse('2.25'), 2_250_000n);
});

test('a new account: an email, and a password of 10 to 200 characters when given', () => {
  assert.deepEqual(newAccountInput.parse({ email: 'ops@example.com' }), { email: 'ops@example.com' });
  assert.deepEqual(messages(newAccountInput.safeParse({ email: 'ops@example.com', password: 'short' })), [
    'must be at least 10 characters',
  ]);
  assert.equal(newAccountInput.safeParse({ email: 'ops@example.com', role: 'admin' }).success, false);
});

test('credit kinds and idempotency keys', () => {
  assert.deepEqual(creditKinds, ['topup', 'grant', 'refund', 'adjustment']);
  assert.equal(idempotencyKeyPattern.test('invoice-2026-11/7'), true);
  assert.equal(idempotencyKeyPattern.test('has space'), false);
  assert.equal(idempotencyKeyPattern.test('x'.repeat(201)), false);
});

test('the operator token matches only itself, whatever the lengths', () => {
  assert.equal(adminTokenMatches('s3cret-token', 's3cret-token'), true);
  assert.equal(adminTokenMatches('s3cret-token', 's3cret-toke'), false);
  assert.equal(adminTokenMatches('s3cret-token', ''), false);
});
