/** What a collector's status and runs look like to an operator (admin API and `tmd collect`). */
import { z } from 'zod';
import type { CollectorStatus } from '../domain/collections.ts';
import type { CollectionRun } from '../store/port.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const collectionRunOut = z.object({
  id: z.int(),
  source: z.string(),
  started_at: z.string(),
  finished_at: z.string(),
  duration_ms: z.int(),
  outcome: z.enum(['ok', 'partial', 'failed']),
  datasets: z.array(z.string()),
  rows_new: z.int(),
  rows_changed: z.int(),
  rows_rejected: z.int(),
  requests: z.int(),
  bytes: z.int(),
  not_modified: z.int().describe('Requests answered 304 Not Modified.'),
  error: z.string().nullable(),
});

export function presentCollectionRun(run: CollectionRun): z.infer<typeof collectionRunOut> {
  return {
    id: run.id,
    source: run.source,
    started_at: iso(run.startedAt) as string,
    finished_at: iso(run.finishedAt) as string,
    duration_ms: run.finishedAt - run.startedAt,
    outcome: run.outcome,
    datasets: run.datasets,
    rows_new: run.rowsNew,
    rows_changed: run.rowsChanged,
    rows_rejected: run.rowsRejected,
    requests: run.requests,
    bytes: run.bytes,
    not_modified: run.notModified,
    error: run.error,
  };
}

export const collectorStatusOut = z.object({
  source: z.string(),
  title: z.string(),
  datasets: z.array(z.string()),
  enabled: z.boolean(),
  schedule: z.string().describe('Cron, UTC.'),
  next_run_at: z.string().nullable().describe('The next scheduled run; null when the source is not enabled.'),
  last_success_at: z.string().nullable(),
  lag_seconds: z.int().nullable().describe('Seconds since the last success.'),
  failures: z.int().describe('Failed runs in a row.'),
  paused_until: z.string().nullable(),
  last_error: z.string().nullable(),
  cursor: z.record(z.string(), z.unknown()),
  last_run: collectionRunOut.nullable(),
});

export function presentCollectorStatus(
  status: CollectorStatus,
  now: number,
): z.infer<typeof collectorStatusOut> {
  const state = status.state;
  return {
    source: status.source,
    title: status.title,
    datasets: [...status.datasets],
    enabled: status.enabled,
    schedule: status.schedule,
    next_run_at: iso(status.nextRunAt),
    last_success_at: iso(state?.lastSuccessAt ?? null),
    lag_seconds:
      state?.lastSuccessAt == null ? null : Math.max(0, Math.floor((now - state.lastSuccessAt) / 1000)),
    failures: state?.failures ?? 0,
    paused_until: iso(state?.pausedUntil ?? null),
    last_error: state?.lastError ?? null,
    cursor: state ? (JSON.parse(state.cursor) as Record<string, unknown>) : {},
    last_run: status.lastRun ? presentCollectionRun(status.lastRun) : null,
  };
}
