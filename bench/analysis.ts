/**
 * npm run bench:analysis: CPU time of the Workbench's compute, without I/O. (1) An analysis of 5 series ×
 * 2,000 observations with 4 transforms (percent change, 30-observation rolling std, rebase, and a
 * correlation matrix) plus its outputs (a line chart, a table, statistics); budget 20 ms. (2) The
 * built-in planner answering a question; budget 10 ms. Reports the median and the 95th percentile.
 *   --runs=200
 */

import { Catalog } from '../src/catalog/catalog.ts';
import { loadCatalogFile } from '../src/catalog/catalog-file.ts';
import { BuiltInPlanner } from '../src/domain/analysis/built-in-planner.ts';
import { type Computed, computeSteps, renderOutputs } from '../src/domain/analysis/engine.ts';
import type { PlannerTools } from '../src/domain/analysis/planner.ts';
import type { AnalysisSpec } from '../src/domain/analysis/spec.ts';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const runs = Number(args.get('runs') ?? 200);

/** CPU microseconds (user + system) of one call. */
function cpu(work: () => unknown): number {
  const started = process.cpuUsage();
  work();
  const { user, system } = process.cpuUsage(started);
  return user + system;
}

async function cpuAsync(work: () => Promise<unknown>): Promise<number> {
  const started = process.cpuUsage();
  await work();
  const { user, system } = process.cpuUsage(started);
  return user + system;
}

function summary(samples: number[]): { median_ms: number; p95_ms: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number) / 1000;
  return { median_ms: Number(at(0.5).toFixed(3)), p95_ms: Number(at(0.95).toFixed(3)) };
}

// Five daily random walks of 2,000 observations, with a gap now and then, seeded for repeatable figures.
let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const ids = ['a', 'b', 'c', 'd', 'e'];
const start = Date.parse('2018-01-01T00:00:00Z');
const dates = Array.from({ length: 2000 }, (_, i) =>
  new Date(start + i * 86_400_000).toISOString().slice(0, 10),
);
const read = new Map<string, Computed>(
  ids.map((id) => {
    let level = 100;
    const values = dates.map(() => {
      level *= 1 + (random() - 0.5) / 50;
      return random() < 0.01 ? null : level;
    });
    return [id, { kind: 'series', label: id, series: { dates, values } }];
  }),
);
const spec: AnalysisSpec = {
  series: ids.map((id) => ({ id, dataset: 'stocks/prices', entity: { symbol: id }, field: 'close' })),
  steps: [
    ...ids.map((id) => ({ op: 'pct_change' as const, input: id, as: `${id}_ret` })),
    ...ids.map((id) => ({ op: 'rolling_std' as const, input: `${id}_ret`, window: 30, as: `${id}_vol` })),
    ...ids.map((id) => ({ op: 'rebase' as const, input: id, as: `${id}_100` })),
    { op: 'correlation', inputs: ids.map((id) => `${id}_ret`), as: 'corr' },
  ],
  outputs: [
    { kind: 'line', values: ids.map((id) => `${id}_100`) },
    { kind: 'table', values: ['corr'] },
    { kind: 'stats', values: ids.map((id) => `${id}_vol`) },
  ],
};

const analysis = () => {
  const { values, problems } = computeSteps(spec, read);
  return renderOutputs(spec, values, problems);
};
for (let i = 0; i < 20; i++) analysis();
const analysisSamples = Array.from({ length: runs }, () => cpu(analysis));

const catalog = new Catalog(loadCatalogFile('config/catalog.json').datasets, {
  listCostOf: () => 2,
  isP0: () => false,
});
const planner = new BuiltInPlanner(catalog);
const questions = [
  'compare AAPL and MSFT closes since 2024-01-01',
  '10-year minus 2-year Treasury yield since 2020',
  'net non-commercial position in gold futures, last 52 weeks',
  'correlation of AAPL, MSFT and NVDA over the last year',
  '30-day volatility of NVDA',
  'rebase Apple and Microsoft to 100 from 2026-10-15',
  'compare APPL and MSFT',
];
const tools = {} as PlannerTools;
for (const q of questions) await planner.plan(q, tools, '2026-11-21');
const plannerSamples: number[] = [];
for (let i = 0; i < runs; i++) {
  for (const q of questions) plannerSamples.push(await cpuAsync(() => planner.plan(q, tools, '2026-11-21')));
}

const report = {
  node: process.version,
  runs,
  analysis: {
    series: 5,
    observations: 2000,
    transforms: 4,
    steps: spec.steps.length,
    budget_ms: 20,
    ...summary(analysisSamples),
  },
  planner: { questions: questions.length, budget_ms: 10, ...summary(plannerSamples) },
};
console.log(JSON.stringify(report, null, 2));
