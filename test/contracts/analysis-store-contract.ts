/**
 * The Store contract's cases for the Workbench's analyses and runs (src/store/analysis-port.ts), run by
 * every adapter inside runStoreContract: scoped to one account, atomic run counting, reuse lookups.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import type { AccountRecord, AnalysisRecord, Ledger } from '../../src/store/port.ts';

const T0 = Date.parse('2026-11-21T15:00:00Z');
const DAY = Date.parse('2026-11-21T00:00:00Z');

export function analysisStoreCases(store: () => Ledger, account: () => Promise<AccountRecord>): void {
  describe('analyses and their runs', () => {
    const id = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;
    const analysis = (accountId: string, at = T0): AnalysisRecord => ({
      id: id('ana'),
      accountId,
      name: 'AAPL vs MSFT',
      spec: '{"series":[]}',
      transcript: null,
      planner: null,
      createdAt: at,
      updatedAt: at,
    });

    test('an analysis is saved, listed newest change first, renamed and deleted, by its own account only', async () => {
      const s = store();
      const owner = await account();
      const other = await account();
      const first = analysis(owner.id, T0);
      const second = { ...analysis(owner.id, T0 + 1), transcript: '[{"role":"user"}]', planner: 'built-in' };
      await s.createAnalysis(first);
      await s.createAnalysis(second);
      assert.deepEqual(await s.getAnalysis(owner.id, second.id), second);
      assert.equal(await s.getAnalysis(other.id, second.id), null);
      assert.deepEqual(
        (await s.listAnalyses(owner.id)).map((a) => a.id),
        [second.id, first.id],
      );
      assert.deepEqual(await s.listAnalyses(other.id), []);
      assert.equal(await s.updateAnalysis(other.id, first.id, { name: 'stolen', updatedAt: T0 + 5 }), false);
      assert.equal(await s.updateAnalysis(owner.id, first.id, { name: 'Renamed', updatedAt: T0 + 5 }), true);
      assert.deepEqual(await s.getAnalysis(owner.id, first.id), {
        ...first,
        name: 'Renamed',
        updatedAt: T0 + 5,
      });
      assert.deepEqual(
        (await s.listAnalyses(owner.id)).map((a) => a.id),
        [first.id, second.id],
      );
      assert.equal(await s.deleteAnalysis(other.id, first.id), false);
      assert.equal(await s.deleteAnalysis(owner.id, first.id), true);
      assert.equal(await s.deleteAnalysis(owner.id, first.id), false);
      assert.equal(await s.getAnalysis(owner.id, first.id), null);
    });

    test('runs are counted per account per day: the cap refuses the next one, also when they race', async () => {
      const s = store();
      const owner = await account();
      const run = (at: number) => ({
        id: id('run'),
        accountId: owner.id,
        analysisId: null,
        kind: 'run' as const,
        inputsHash: 'h1',
        startedAt: at,
      });
      // One from yesterday does not count toward today.
      assert.deepEqual(await s.beginAnalysisRun(run(DAY - 1), { sinceMs: DAY - 86_400_000, maxRuns: 5 }), {
        ok: true,
      });
      const started = await Promise.all(
        Array.from({ length: 6 }, () => s.beginAnalysisRun(run(T0), { sinceMs: DAY, maxRuns: 3 })),
      );
      assert.equal(started.filter((r) => r.ok).length, 3);
      assert.deepEqual(
        started.filter((r) => !r.ok),
        [
          { ok: false, runs: 3 },
          { ok: false, runs: 3 },
          { ok: false, runs: 3 },
        ],
      );
      assert.equal(await s.countAnalysisRuns(owner.id, DAY), 3);
      assert.equal(await s.countAnalysisRuns(owner.id, DAY - 86_400_000), 4);
      assert.equal(await s.countAnalysisRuns((await account()).id, DAY), 0);
    });

    test('a released run no longer counts toward the day; a finished one, or another account, cannot release it', async () => {
      const s = store();
      const owner = await account();
      const begin = async () => {
        const runId = id('run');
        const begun = await s.beginAnalysisRun(
          { id: runId, accountId: owner.id, analysisId: null, kind: 'ask', inputsHash: null, startedAt: T0 },
          { sinceMs: DAY, maxRuns: 1 },
        );
        assert.deepEqual(begun, { ok: true });
        return runId;
      };
      const asked = await begin();
      assert.equal(await s.releaseAnalysisRun((await account()).id, asked), false);
      assert.equal(await s.releaseAnalysisRun(owner.id, asked), true);
      assert.equal(await s.countAnalysisRuns(owner.id, DAY), 0);
      const ran = await begin();
      await s.finishAnalysisRun(ran, { status: 'done', reads: 1, burnedMicros: 0n, result: null });
      assert.equal(await s.releaseAnalysisRun(owner.id, ran), false);
      assert.equal(await s.countAnalysisRuns(owner.id, DAY), 1);
    });

    test('a finished run is found by its inputs or its analysis, newest first; a failed one never', async () => {
      const s = store();
      const owner = await account();
      const begin = async (at: number, inputsHash: string | null) => {
        const runId = id('run');
        const begun = await s.beginAnalysisRun(
          { id: runId, accountId: owner.id, analysisId: null, kind: 'ask', inputsHash, startedAt: at },
          { sinceMs: DAY, maxRuns: 100 },
        );
        assert.deepEqual(begun, { ok: true });
        return runId;
      };
      const older = await begin(T0, 'h1');
      await s.finishAnalysisRun(older, {
        status: 'done',
        reads: 2,
        burnedMicros: 5_400_000n,
        result: '{"n":1}',
      });
      const newer = await begin(T0 + 10, null);
      assert.equal(
        await s.findAnalysisRun(owner.id, { inputsHash: 'h1', sinceMs: T0 + 5 }),
        null,
        'still running',
      );
      await s.finishAnalysisRun(newer, {
        status: 'done',
        reads: 3,
        burnedMicros: 8_100_000n,
        result: '{"n":2}',
        analysisId: 'ana_x',
        inputsHash: 'h1',
      });
      const failed = await begin(T0 + 20, 'h1');
      await s.finishAnalysisRun(failed, {
        status: 'failed',
        reads: 1,
        burnedMicros: 2_700_000n,
        result: null,
      });
      assert.deepEqual(await s.findAnalysisRun(owner.id, { inputsHash: 'h1' }), {
        id: newer,
        accountId: owner.id,
        analysisId: 'ana_x',
        kind: 'ask',
        inputsHash: 'h1',
        startedAt: T0 + 10,
        status: 'done',
        reads: 3,
        burnedMicros: 8_100_000n,
        result: '{"n":2}',
      });
      assert.equal((await s.findAnalysisRun(owner.id, { analysisId: 'ana_x' }))?.id, newer);
      assert.equal(
        (await s.findAnalysisRun(owner.id, { inputsHash: 'h1', sinceMs: T0 + 11 }))?.id,
        undefined,
      );
      assert.equal(await s.findAnalysisRun((await account()).id, { inputsHash: 'h1' }), null);
    });
  });
}
