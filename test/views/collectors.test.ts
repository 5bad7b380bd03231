import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CollectionRun } from '../../src/store/port.ts';
import {
  collectionRunOut,
  collectorStatusOut,
  presentCollectionRun,
  presentCollectorStatus,
} from '../../src/views/collectors.ts';
import { T0 } from '../domain/support.ts';

const run: CollectionRun = {
  id: 3,
  source: 'usgs',
  startedAt: T0,
  finishedAt: T0 + 1234,
  outcome: 'partial',
  datasets: ['hazards/earthquakes'],
  rowsNew: 10,
  rowsChanged: 2,
  rowsRejected: 1,
  requests: 4,
  bytes: 2048,
  notModified: 1,
  error: null,
};

test('a run shows its duration and counts', () => {
  const view = presentCollectionRun(run);
  assert.deepEqual(view, {
    id: 3,
    source: 'usgs',
    started_at: '2026-11-21T15:00:00.000Z',
    finished_at: '2026-11-21T15:00:01.234Z',
    duration_ms: 1234,
    outcome: 'partial',
    datasets: ['hazards/earthquakes'],
    rows_new: 10,
    rows_changed: 2,
    rows_rejected: 1,
    requests: 4,
    bytes: 2048,
    not_modified: 1,
    error: null,
  });
  assert.deepEqual(collectionRunOut.parse(view), view);
});

test("a collector's status shows its lag since the last success, its cursor and its last run", () => {
  const view = presentCollectorStatus(
    {
      source: 'usgs',
      title: 'USGS earthquakes',
      datasets: ['hazards/earthquakes'],
      enabled: true,
      schedule: '*/15 * * * *',
      nextRunAt: T0 + 900_000,
      state: {
        source: 'usgs',
        cursor: '{"since":"2026-11-21"}',
        lastRunAt: T0,
        lastSuccessAt: T0 - 90_500,
        lastError: 'timeout',
        failures: 1,
        pausedUntil: null,
        claimedSlot: null,
      },
      lastRun: run,
    },
    T0,
  );
  assert.deepEqual(
    { ...view, last_run: view.last_run?.id },
    {
      source: 'usgs',
      title: 'USGS earthquakes',
      datasets: ['hazards/earthquakes'],
      enabled: true,
      schedule: '*/15 * * * *',
      next_run_at: '2026-11-21T15:15:00.000Z',
      last_success_at: '2026-11-21T14:58:29.500Z',
      lag_seconds: 90,
      failures: 1,
      paused_until: null,
      last_error: 'timeout',
      cursor: { since: '2026-11-21' },
      last_run: 3,
    },
  );
  assert.deepEqual(collectorStatusOut.parse(view), view);
});

test('a collector that never ran has no lag, an empty cursor and no last run', () => {
  const view = presentCollectorStatus(
    {
      source: 'ecb',
      title: 'ECB',
      datasets: [],
      enabled: false,
      schedule: '0 6 * * *',
      nextRunAt: null,
      state: null,
      lastRun: null,
    },
    T0,
  );
  assert.deepEqual(
    {
      next: view.next_run_at,
      lag: view.lag_seconds,
      failures: view.failures,
      cursor: view.cursor,
      last: view.last_run,
    },
    { next: null, lag: null, failures: 0, cursor: {}, last: null },
  );
});
