/**
 * MCP pages sized for a model, on both stores: a read_dataset page of the widest dataset stays within
 * the page text budget, says it was cut and how to go on and at what cost, and its pages, followed by
 * cursor, hold exactly the rows REST pages hold, each page charged once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PAGE_TEXT_BUDGET } from '../src/mcp/tools/read-dataset.ts';
import { freshDatabase, type TestDatabase } from './helpers/backends.ts';
import { rpc, toolCall } from './helpers/mcp.ts';
import { assertLedgerBalanced, bearer, startServer, walletAccount } from './helpers/server.ts';

const WIDEST = 'cot/legacy-futures';

// biome-ignore lint/suspicious/noExplicitAny: tool results are asserted field by field
type Loose = any;

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: a page of the widest dataset stays within the text budget and continues by cursor`, async (t) => {
    let db: TestDatabase | null = null;
    if (backend === 'postgres') {
      const made = await freshDatabase();
      if ('skip' in made) return t.skip(made.skip);
      db = made;
    }
    const server = await startServer({ env: db ? { DATABASE_URL: db.url } : {} });
    try {
      const { key, account } = await walletAccount(server, 10_000);
      const rest = await server.request('GET', `/api/v1/data/${WIDEST}?limit=1000`, { headers: bearer(key) });
      assert.equal(rest.status, 200, rest.text);
      const all = rest.json.data as Record<string, unknown>[];
      assert.ok(all.length > 200, `the sample holds ${all.length} rows`);

      const seen: Record<string, unknown>[] = [];
      let cursor: string | undefined;
      let pages = 0;
      for (;;) {
        const args: Record<string, unknown> = { dataset: WIDEST, limit: 1000 };
        if (cursor) args.cursor = cursor;
        const res = await rpc(server, bearer(key), toolCall('read_dataset', args, ++pages));
        const result = res.json.result as Loose;
        assert.equal(result.isError, undefined, JSON.stringify(result));
        const [page, note, next] = result.content as { text: string }[];
        assert.ok(page && note && next);
        assert.ok(page.text.length <= PAGE_TEXT_BUDGET + 2_000, `page text ${page.text.length} chars`);
        const rows = result.structuredContent.data as Record<string, unknown>[];
        assert.equal(
          page.text.trimEnd().split('\n').length,
          rows.length + 2,
          'a head, a header, a line a row',
        );
        seen.push(...rows);
        cursor = result.structuredContent.meta.next_cursor ?? undefined;
        if (!cursor) {
          assert.equal(next.text, 'No more rows: this is the last page.');
          break;
        }
        assert.ok(rows.length < 1000);
        assert.match(
          page.text.split('\n')[0] as string,
          /cut short of limit 1000 to stay within about 20,000 tokens/,
        );
        assert.equal(
          next.text,
          `next_cursor: ${cursor}\nNext page: pass it as cursor with the same arguments; it is another read at ${result._meta['tmd.example/cost'].token_cost} tokens.`,
        );
        assert.ok(pages < 50, 'the pages end');
      }
      assert.ok(pages > 1, 'a page of 1000 wide rows is cut');
      assert.deepEqual(seen, all, 'the pages hold the rows REST gives, in order, once each');

      // Fewer fields fit more rows a page.
      const narrow = await rpc(
        server,
        bearer(key),
        toolCall('read_dataset', { dataset: WIDEST, limit: 1000, fields: 'report_date' }, 99),
      );
      const narrowRows = (narrow.json.result as Loose).structuredContent.data as unknown[];
      assert.equal(narrowRows.length, Math.min(1000, all.length));

      const burns = (await server.deps.store.listEntries(account.walletId)).filter((e) => e.kind === 'burn');
      assert.equal(burns.length, pages + 2, 'each page and the REST read charged once');
      await assertLedgerBalanced(server);
    } finally {
      await server.close();
      await db?.drop();
    }
  });
}
