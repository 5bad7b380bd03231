/** `tmd token-requests` over a stand-in billing service. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tokenRequestsCommand } from '../../../src/cli/commands/token-requests.ts';
import type { TokenRequest } from '../../../src/store/billing-port.ts';
import { cliContext } from '../../helpers/cli-context.ts';

const request: TokenRequest = {
  id: 'treq_1',
  accountId: 'acc_1',
  walletId: 'wal_1',
  packId: 'pack_10k',
  tokens: 10000,
  note: 'PO 17',
  status: 'open',
  reason: null,
  createdAt: Date.parse('2026-11-20T08:00:00Z'),
  settledAt: null,
  entryId: null,
};

const printed = {
  id: 'treq_1',
  account_id: 'acc_1',
  pack: 'pack_10k',
  tokens: 10000,
  note: 'PO 17',
  status: 'open',
  reason: null,
  requested_at: '2026-11-20T08:00:00.000Z',
  settled_at: null,
  ledger_entry_id: null,
};

function billing(calls: unknown[]) {
  return {
    openRequests: async () => [request],
    settle: async (id: string, how: unknown) => {
      calls.push([id, how]);
      return request;
    },
  };
}

test('with no sub-command the open requests are listed', async () => {
  const { ctx, json } = cliContext({ billing: billing([]) });
  assert.equal(await tokenRequestsCommand(ctx, undefined, []), true);
  assert.deepEqual(json(), { data: [printed] });
});

test('credit settles by crediting; decline needs a reason, trimmed', async () => {
  const calls: unknown[] = [];
  const { ctx } = cliContext({ billing: billing(calls) });
  await tokenRequestsCommand(ctx, 'credit', ['treq_1']);
  await tokenRequestsCommand(ctx, 'decline', ['treq_1', '--reason', '  no PO  ']);
  assert.deepEqual(calls, [
    ['treq_1', { credit: true, actor: 'tmd' }],
    ['treq_1', { credit: false, reason: 'no PO' }],
  ]);
  await assert.rejects(tokenRequestsCommand(ctx, 'decline', ['treq_1', '--reason', ' ']), {
    name: 'UsageError',
    message: 'decline needs --reason <text>: the account sees it',
  });
  await assert.rejects(tokenRequestsCommand(ctx, 'credit', []), { message: 'missing <request-id>' });
  assert.equal(await tokenRequestsCommand(ctx, 'refund', ['treq_1']), false);
  assert.equal(calls.length, 2);
});
