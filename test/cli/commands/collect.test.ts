/** `tmd collect` over a stand-in collections service: a run, the status, and a failed run's exit. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collectCommand } from '../../../src/cli/commands/collect.ts';
import type { CollectionRun } from '../../../src/store/collection-port.ts';
import { cliContext } from '../../helpers/cli-context.ts';

const startedAt = Date.parse('2026-11-28T06:00:00Z');

function collections(calls: unknown[], outcome: CollectionRun['outcome']) {
  return {
    status: async () => [],
    run: async (source: string, options: unknown): Promise<CollectionRun> => {
      calls.push([source, options]);
      return {
        id: 3,
        source,
        startedAt,
        finishedAt: startedAt + 1500,
        outcome,
        datasets: ['macro/fred-series'],
        rowsNew: 4,
        rowsChanged: 1,
        rowsRejected: 0,
        requests: 2,
        bytes: 900,
        notModified: 1,
        error: outcome === 'failed' ? 'HTTP 503' : null,
      };
    },
  };
}

test('a run passes --since and --backfill to the collector', async () => {
  const calls: unknown[] = [];
  const { ctx, json } = cliContext({ collections: collections(calls, 'ok') });
  assert.equal(await collectCommand(ctx, 'fred', ['--since', '2024-01-01', '--backfill']), true);
  assert.deepEqual(json(), {
    id: 3,
    source: 'fred',
    started_at: '2026-11-28T06:00:00.000Z',
    finished_at: '2026-11-28T06:00:01.500Z',
    duration_ms: 1500,
    outcome: 'ok',
    datasets: ['macro/fred-series'],
    rows_new: 4,
    rows_changed: 1,
    rows_rejected: 0,
    requests: 2,
    bytes: 900,
    not_modified: 1,
    error: null,
  });
  await collectCommand(ctx, 'usgs', []);
  assert.deepEqual(calls, [
    ['fred', { since: '2024-01-01', backfill: true }],
    ['usgs', { backfill: false }],
  ]);
});

test('--status lists every source; an empty list prints an empty data array', async () => {
  const { ctx, json } = cliContext({ collections: collections([], 'ok') });
  await collectCommand(ctx, '--status', []);
  assert.deepEqual(json(), { data: [] });
});

test('a failed run is printed, then fails the command; --since must be a date', async () => {
  const calls: unknown[] = [];
  const { ctx, out } = cliContext({ collections: collections(calls, 'failed') });
  await assert.rejects(collectCommand(ctx, 'fred', []), {
    name: 'CommandFailed',
    message: 'fred: the run failed: HTTP 503',
  });
  assert.equal((JSON.parse(out()) as { error: string }).error, 'HTTP 503');
  await assert.rejects(collectCommand(ctx, 'fred', ['--since', '2024-1-1']), {
    name: 'UsageError',
    message: '--since must be a date, YYYY-MM-DD',
  });
  await assert.rejects(collectCommand(ctx, undefined, []), { message: 'missing <source>' });
  assert.equal(calls.length, 1);
});
