/**
 * library.ts: an account's saved analyses, checked against their schemas and the catalog when written,
 * and only for accounts whose package brings the Workbench.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { inputsHash, parseAnalysis } from '../../../src/domain/analysis/library.ts';
import type { AppError } from '../../../src/errors.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { testCaller } from '../harness.ts';
import { compare } from './fixtures.ts';

describe('the library of saved analyses', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  const library = () => server.deps.analyses.library;

  test('create() saves an analysis as parsed; get() and list() give it back', async () => {
    const { caller } = await testCaller(server, { pkg: 'workbench' });
    const created = await library().create(caller, { name: 'two closes', spec: compare });
    assert.match(created.id, /^ana_[A-Za-z0-9_-]{16}$/);
    assert.deepEqual(
      { ...created, id: 'x' },
      {
        id: 'x',
        name: 'two closes',
        spec: compare,
        planner: null,
        transcript: null,
        createdAt: server.clock.now(),
        updatedAt: server.clock.now(),
      },
    );
    assert.deepEqual(await library().get(caller, created.id), created);
    assert.deepEqual(await library().list(caller), { analyses: [created], unreadable: [] });
  });

  test('update() renames, duplicate() copies under "(copy)", delete() removes: each 404 once gone', async () => {
    const { caller } = await testCaller(server, { pkg: 'workbench' });
    const created = await library().create(caller, { name: 'first', spec: compare });
    server.clock.advance(1000);
    const renamed = await library().update(caller, created.id, { name: 'renamed' });
    assert.deepEqual([renamed.name, renamed.updatedAt - renamed.createdAt], ['renamed', 1000]);
    const copy = await library().duplicate(caller, created.id);
    assert.equal(copy.name, 'renamed (copy)');
    assert.notEqual(copy.id, created.id);
    await library().delete(caller, created.id);
    for (const gone of [
      library().get(caller, created.id),
      library().update(caller, created.id, { name: 'x' }),
      library().delete(caller, created.id),
    ]) {
      await assert.rejects(gone, {
        code: 'not_found',
        message: `No analysis ${created.id} in this account.`,
      });
    }
  });

  test("another account's analysis is not found", async () => {
    const owner = await testCaller(server, { pkg: 'workbench' });
    const other = await testCaller(server, { pkg: 'workbench' });
    const created = await library().create(owner.caller, { name: 'mine', spec: compare });
    await assert.rejects(library().get(other.caller, created.id), { code: 'not_found' });
  });

  test('an invalid analysis is 400 invalid_request listing every problem by path', () => {
    assert.throws(
      () => parseAnalysis({ name: '', spec: { ...compare, series: [] } }),
      (error: AppError) => {
        assert.equal(error.code, 'invalid_request');
        assert.deepEqual(
          (error.extras.errors as { path: string }[]).map((e) => e.path),
          ['name', 'spec.series'],
        );
        return true;
      },
    );
  });

  test('a spec naming a dataset the catalog lacks is refused before it is saved', async () => {
    const { account, caller } = await testCaller(server, { pkg: 'workbench' });
    const spec = { ...compare, series: compare.series.map((s) => ({ ...s, dataset: 'stocks/nope' })) };
    await assert.rejects(library().create(caller, { name: 'bad', spec }), { code: 'dataset_not_found' });
    assert.deepEqual(await server.deps.store.listAnalyses(account.id), []);
  });

  test('a stored analysis that no longer parses is left out of list() and named as unreadable', async () => {
    const { account, caller } = await testCaller(server, { pkg: 'workbench' });
    await server.deps.store.createAnalysis({
      id: 'ana_unreadable',
      accountId: account.id,
      name: 'old',
      spec: '{"series": 3}',
      transcript: null,
      planner: null,
      createdAt: 0,
      updatedAt: 0,
    });
    assert.deepEqual(await library().list(caller), {
      analyses: [],
      unreadable: [{ id: 'ana_unreadable', name: 'old' }],
    });
    await assert.rejects(library().get(caller, 'ana_unreadable'), { code: 'invalid_request' });
  });

  test('an account without the Workbench package is refused with analysis_not_entitled', async () => {
    const { caller } = await testCaller(server, { pkg: 'pro' });
    await assert.rejects(library().list(caller), (error: AppError) => {
      assert.equal(error.code, 'analysis_not_entitled');
      assert.deepEqual(error.extras.packages, ['workbench']);
      return true;
    });
  });

  test('inputsHash() is the same for one analysis however its keys are ordered', () => {
    const reordered = JSON.parse(
      JSON.stringify({ outputs: compare.outputs, steps: compare.steps, series: compare.series }),
    );
    assert.equal(inputsHash(reordered), inputsHash(compare));
    assert.notEqual(
      inputsHash({
        ...compare,
        series: compare.series.slice(0, 1),
        outputs: [{ kind: 'line', values: ['aapl'] }],
      }),
      inputsHash(compare),
    );
  });
});
