/** `tmd key create` and `tmd key caps` over a stand-in operator: what reaches it, what is printed. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyCommand } from '../../../src/cli/commands/keys.ts';
import type { KeyRecord } from '../../../src/store/port.ts';
import { CLI_NOW, cliContext } from '../../helpers/cli-context.ts';

const key: KeyRecord = {
  id: 'key_1',
  kind: 'live',
  digest: 'd',
  displayPrefix: 'tmd_live_ab',
  name: 'ci',
  accountId: 'acc_1',
  walletId: 'wal_1',
  createdAt: CLI_NOW - 86_400_000,
  expiresAt: null,
  revokedAt: null,
  dailyCapMicros: null,
  monthlyCapMicros: 12_500_000n,
};

const printedKey = {
  id: 'key_1',
  kind: 'live',
  prefix: 'tmd_live_ab',
  name: 'ci',
  created_at: '2026-11-27T12:00:00.000Z',
  expires_at: null,
  revoked_at: null,
  status: 'active',
  spending_caps: { daily: null, monthly: '12.5' },
};

test('key caps: "none" removes a cap, a cap not given is left out, the key is printed as stored', async () => {
  const calls: unknown[] = [];
  const { ctx, json } = cliContext({
    operator: {
      setKeyCaps: async (id: string, caps: unknown) => {
        calls.push([id, caps]);
        return key;
      },
    },
  });
  assert.equal(await keyCommand(ctx, 'caps', ['key_1', '--daily', 'none', '--monthly', '12.5']), true);
  assert.deepEqual(calls, [['key_1', { dailyCapMicros: null, monthlyCapMicros: 12_500_000n }]]);
  assert.deepEqual(json(), printedKey);
  await keyCommand(ctx, 'caps', ['key_1']);
  assert.deepEqual(calls[1], ['key_1', { dailyCapMicros: undefined, monthlyCapMicros: undefined }]);
});

test('key caps refuses an amount that is not a token amount, naming the flag', async () => {
  const { ctx } = cliContext({ operator: {} });
  await assert.rejects(keyCommand(ctx, 'caps', ['key_1', '--daily', 'lots']), {
    name: 'UsageError',
    message: /^--daily: /,
  });
  await assert.rejects(keyCommand(ctx, 'caps', []), { message: 'missing <key-id>' });
});

test('key create: the name and expiry reach the operator; the secret is printed once with the key', async () => {
  const calls: unknown[] = [];
  const { ctx, json } = cliContext({
    operator: {
      createKey: async (...args: unknown[]) => {
        calls.push(args);
        return { record: key, secret: 'tmd_live_abSECRET' };
      },
    },
  });
  await keyCommand(ctx, 'create', ['acc_1', '--name', 'ci', '--expires-at', '2027-01-01T00:00:00Z']);
  assert.deepEqual(calls, [['acc_1', 'ci', Date.parse('2027-01-01T00:00:00Z')]]);
  assert.deepEqual(json(), { ...printedKey, key: 'tmd_live_abSECRET' });
});

test('key create takes only an ISO time with its zone; an unknown sub-command is not handled', async () => {
  const { ctx } = cliContext({ operator: {} });
  await assert.rejects(keyCommand(ctx, 'create', ['acc_1', '--expires-at', '2027-01-01T00:00']), {
    message: '--expires-at must be an ISO 8601 time with Z or an offset, e.g. 2027-01-01T00:00:00Z',
  });
  assert.equal(await keyCommand(ctx, 'revoke', ['key_1']), false);
  assert.equal(await keyCommand(ctx, undefined, []), false);
});
