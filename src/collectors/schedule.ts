/**
 * Runs each enabled collector source on its schedule (croner, UTC). Every node schedules every source;
 * the store's slot claim (claimCollectorSlot) lets exactly one node run each slot, and croner's
 * `protect` keeps a slow run from overlapping the next on this node.
 */
import { Cron } from 'croner';
import type { Collections } from '../domain/collections.ts';
import type { ProcessLog } from '../services.ts';

export function scheduleCollectors(collections: Collections, log: ProcessLog): () => void {
  const jobs = collections.scheduled().map(
    ({ source, schedule }) =>
      new Cron(schedule, { timezone: 'UTC', protect: true }, async (self: Cron) => {
        // The slot is the minute the schedule fired for, the same on every node.
        const slot = Math.floor((self.currentRun() ?? new Date()).getTime() / 60_000) * 60_000;
        try {
          const run = await collections.runScheduled(source, slot);
          if (run)
            log[run.outcome === 'failed' ? 'warn' : 'info']('collected', {
              source,
              outcome: run.outcome,
              rows_new: run.rowsNew,
              rows_changed: run.rowsChanged,
              requests: run.requests,
              ...(run.error ? { err: run.error } : {}),
            });
        } catch (error) {
          log.warn('a scheduled collection could not run; the next slot tries again', {
            source,
            err: (error as Error).message,
          });
        }
      }),
  );
  return () => {
    for (const job of jobs) job.stop();
  };
}
