/**
 * The low-balance notice: an account sets a threshold; the read that takes the balance from at or
 * above it to below it is posted, once per crossing, to the operator's webhook, signed (HMAC-SHA256 of
 * "<t>.<body>"), and retried until it is taken.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertLedgerBalanced, bearer, startServer, walletAccount } from './helpers/server.ts';

const SECRET = 'alert-secret-for-tests-0123456789';
const received: { body: string; signature: string }[] = [];
let failFirst = 0;
const hook = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    if (failFirst > 0) {
      failFirst--;
      response.writeHead(500);
      response.end();
      return;
    }
    received.push({ body, signature: String(request.headers['tmd-signature']) });
    response.writeHead(204);
    response.end();
  });
});
let hookUrl = '';
before(async () => {
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/alerts`;
});
after(() => new Promise<void>((resolve) => hook.close(() => resolve())));

async function until(check: () => boolean, ms = 8_000): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > ms) throw new Error('timed out');
    await sleep(20);
  }
}

test('a read that crosses the threshold is notified once, signed, and retried until taken', async () => {
  const server = await startServer({ env: { ALERT_WEBHOOK_URL: hookUrl, ALERT_WEBHOOK_SECRET: SECRET } });
  try {
    const { key, account } = await walletAccount(server, 10);
    const read = async () =>
      (await server.request('GET', '/api/v1/data/equities/stock-prices?limit=1', { headers: bearer(key) }))
        .status;
    const set = await server.request('PUT', '/api/v1/me/low-balance', {
      headers: bearer(key),
      body: { tokens: 5 },
    });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.json.account.low_balance, '5');
    server.clock.advance(3_000); // past the key cache, which holds the account as it was

    assert.equal(await read(), 200); // 10 -> 8
    assert.equal(await read(), 200); // 8 -> 6
    failFirst = 2;
    assert.equal(await read(), 200); // 6 -> 4: crosses
    assert.equal(await read(), 200); // 4 -> 2: below already
    await until(() => received.length === 1);
    await sleep(200);
    assert.equal(received.length, 1, 'once per crossing');
    const [first] = received;
    const event = JSON.parse(first?.body ?? '{}');
    assert.deepEqual(
      [event.type, event.account_id, event.wallet_id, event.balance, event.threshold],
      ['balance.low', account.id, account.walletId, '4', '5'],
    );
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(first?.signature ?? '') ?? [];
    assert.equal(v1, createHmac('sha256', SECRET).update(`${t}.${first?.body}`).digest('hex'), 'signed');

    // Topped up above it, then crossing again: a second notice.
    await server.deps.store.credit({
      walletId: account.walletId,
      kind: 'topup',
      amountMicros: 8_000_000n,
      at: Date.now(),
    });
    assert.equal(await read(), 200); // 10 -> 8
    assert.equal(await read(), 200); // 8 -> 6
    assert.equal(await read(), 200); // 6 -> 4: crosses again
    await until(() => received.length === 2);
    assert.equal(JSON.parse(received[1]?.body ?? '{}').balance, '4');

    const cleared = await server.request('PUT', '/api/v1/me/low-balance', {
      headers: bearer(key),
      body: { tokens: null },
    });
    assert.equal(cleared.json.account.low_balance, null);
    await assertLedgerBalanced(server);
  } finally {
    await server.close();
  }
});
