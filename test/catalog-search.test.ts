/**
 * Finding data in the catalog: a ticker or series id finds the datasets that hold it, every word must
 * match, and the best matches come first (the dataset named so, then its domain, then an entity it holds).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.close();
});

async function keys(q: string): Promise<string[]> {
  const res = await server.request('GET', `/api/v1/catalog?q=${encodeURIComponent(q)}`);
  assert.equal(res.status, 200, res.text);
  return (res.json.data as { key: string }[]).map((e) => e.key);
}

test('a ticker finds the datasets that hold it, and only those', async () => {
  const found = await keys('AAPL');
  assert.ok(found.includes('equities/stock-prices'), found.join(', '));
  assert.ok(found.includes('eodquotes/stock-prices'));
  assert.ok(!found.includes('rates/fed-h15-series'), 'a rates dataset holds no AAPL');
  assert.deepEqual(await keys('aapl'), found, 'case does not matter');
});

test('a series id finds its dataset; a word and an entity narrow together', async () => {
  assert.ok((await keys('DGS10')).includes('rates/fed-h15-series'));
  const aapl = await keys('AAPL');
  const both = await keys('AAPL stock');
  assert.ok(both.includes('equities/stock-prices'));
  assert.ok(
    both.every((k) => aapl.includes(k)),
    'a second word only narrows',
  );
  assert.ok(both.length < aapl.length, 'and does narrow');
  assert.deepEqual(await keys('AAPL zzznothing'), [], 'every word must match');
});

test('the best matches come first: a dataset named so, then its domain, before a description', async () => {
  const yields = await keys('treasury yield');
  assert.match(yields[0] as string, /treasury-yield-series$/);
  const cot = await keys('cot');
  assert.match(cot[0] as string, /^cot\//, cot.join(', '));
  // Without words the catalog stays in key order.
  const all = await keys('');
  assert.deepEqual(
    all,
    [...all].sort((a, b) => a.localeCompare(b)),
  );
});
