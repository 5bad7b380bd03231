/**
 * A model of the ledger: random sequences of sign-ups, credits, reads (REST, MCP, the Terminal's session
 * cookie; retried, in bursts), estimates, refusals, exports (some failing and refunded), spending caps,
 * package changes, monthly credits, time moving on and restarts, run on the service and on a plain
 * in-memory model (test/helpers/ledger-model), on both stores. After every step the service's balances,
 * entries, usage and caps must be the model's, and the ledger audit clean. LEDGER_MODEL_RUNS sets the
 * number of sequences (a few by default); see docs/architecture.md.
 */
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { checkRun } from './helpers/ledger-model/check.ts';
import { type Service, START, startService } from './helpers/ledger-model/harness.ts';
import { priceListOf } from './helpers/ledger-model/model.ts';
import { type Run, runStep } from './helpers/ledger-model/runner.ts';
import { type Step, sequenceArb } from './helpers/ledger-model/steps.ts';

const RUNS = Number(process.env.LEDGER_MODEL_RUNS ?? 0);
/** Replays a failure fast-check printed: its seed and path. */
const SEED = process.env.LEDGER_MODEL_SEED;
const PATH = process.env.LEDGER_MODEL_PATH;

const stores = [
  { kind: 'sqlite', runs: 20, length: 25 },
  { kind: 'postgres', runs: 12, length: 25 },
] as const;

for (const { kind, runs, length } of stores) {
  const made = await startService(kind);
  const skip = 'skip' in made ? made.skip : false;
  describe(`ledger model on ${kind}`, { skip }, () => {
    let svc: Service;
    let runCount = 0;
    before(() => {
      svc = made as Service;
    });
    after(() => svc?.close());

    test('every step leaves balances, entries, usage and caps as the model has them', async () => {
      const prices = priceListOf((await svc.request('GET', '/api/v1/pricing')).json);
      const listed = (await svc.request('GET', '/api/v1/recipes')).json.data as {
        name: string;
        reads: string[];
      }[];
      const recipes = Object.fromEntries(listed.map((r) => [r.name, r.reads]));
      const property = fc.asyncProperty(sequenceArb(length), async (steps: Step[]) => {
        svc.clock.t = START;
        const run: Run = {
          svc,
          prices,
          recipes,
          actors: [],
          tag: `m${++runCount}`,
          counter: 0,
          lastIdempotent: null,
        };
        for (const step of steps) {
          await runStep(run, step);
          await checkRun(run);
        }
      });
      await fc.assert(property, {
        numRuns: RUNS > 0 ? RUNS : runs,
        ...(SEED === undefined ? {} : { seed: Number(SEED) }),
        ...(PATH === undefined ? {} : { path: PATH }),
      });
    });
  });
}
