/**
 * engine.ts: steps run in order over the series read, a step that cannot run is reported and what needs
 * it skipped; outputs rendered as charts, tables and statistics; the result as CSV.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Computed,
  computeSteps,
  type RenderedOutput,
  renderOutputs,
  resultCsv,
  type StepProblem,
} from '../../../src/domain/analysis/engine.ts';
import type { AnalysisSpec, SeriesSpec } from '../../../src/domain/analysis/spec.ts';

const DATES = ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04'];
const series = (label: string, values: (number | null)[], dates = DATES): Computed => ({
  kind: 'series',
  label,
  series: { dates: dates.slice(0, values.length), values },
});
const read = new Map<string, Computed>([
  ['a', series('Alpha', [100, 120, 90, 130])],
  ['b', series('b', [1, 2, 3], ['2024-01-02', '2024-01-03', '2024-01-05'])],
]);
const spec = (steps: AnalysisSpec['steps'], outputs: AnalysisSpec['outputs']): AnalysisSpec => ({
  series: [] as SeriesSpec[],
  steps,
  outputs,
});

/** Steps then outputs, as the service runs them. */
function run(s: AnalysisSpec, values: ReadonlyMap<string, Computed> = read) {
  const computed = computeSteps(s, values);
  const outputs = renderOutputs(s, computed.values, computed.problems);
  return { values: computed.values, problems: computed.problems, outputs };
}

describe('steps', () => {
  test('each step sees the results before it', () => {
    const { values, problems } = run(
      spec(
        [
          { op: 'pct_change', input: 'a', as: 'r' },
          { op: 'rolling_mean', input: 'r', as: 'm', window: 2 },
        ],
        [],
      ),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(values.get('r'), series('r', [null, 20, -25, (130 / 90 - 1) * 100]));
    const m = values.get('m');
    assert.equal(m?.kind, 'series');
    assert.deepEqual(m?.kind === 'series' && m.series.values, [
      null,
      null,
      -2.5,
      (-25 + (130 / 90 - 1) * 100) / 2,
    ]);
  });

  test('align keeps each input its label and only the common dates', () => {
    const { values } = run(spec([{ op: 'align', inputs: ['a', 'b'] }], []));
    assert.deepEqual(values.get('a'), series('Alpha', [120, 90], ['2024-01-02', '2024-01-03']));
    assert.deepEqual(values.get('b'), series('b', [1, 2], ['2024-01-02', '2024-01-03']));
  });

  test('a correlation is a matrix named by the labels of its inputs; a drawdown keeps its dates', () => {
    const { values } = run(
      spec(
        [
          { op: 'correlation', inputs: ['a', 'a'], as: 'c' },
          { op: 'drawdown', input: 'a', as: 'dd' },
        ],
        [],
      ),
    );
    assert.deepEqual(values.get('c'), {
      kind: 'matrix',
      label: 'c',
      labels: ['Alpha', 'Alpha'],
      matrix: [
        [1, 1],
        [1, 1],
      ],
      observations: 4,
    });
    assert.deepEqual(values.get('dd'), {
      kind: 'drawdown',
      label: 'dd',
      drawdown: {
        maxDrawdownPct: -25,
        peakDate: '2024-01-02',
        troughDate: '2024-01-03',
        recoveryDate: '2024-01-04',
      },
    });
  });
});

describe('steps that cannot run', () => {
  test('a step that cannot run is reported, and the steps and outputs needing it are skipped', () => {
    const zero = new Map([['z', series('z', [0, 1, 2])]]);
    const { values, problems, outputs } = run(
      spec(
        [
          { op: 'rebase', input: 'z', as: 'r' },
          { op: 'pct_change', input: 'r', as: 'rr' },
          { op: 'curve', input: 'z', as: 'c' },
        ],
        [
          { kind: 'line', values: ['rr'] },
          { kind: 'table', values: ['z'] },
        ],
      ),
      zero,
    );
    assert.equal(values.has('r'), false);
    assert.equal(values.has('rr'), false);
    assert.deepEqual(problems.slice(1), [
      { path: 'steps.1', message: 'pct_change skipped: r could not be computed' },
      {
        path: 'steps.2',
        message: 'curve: a curve reads every tenor: z must be read with no tenor in its entity',
      },
      { path: 'outputs.0', message: 'output skipped: no series or step result is named rr' },
    ]);
    assert.equal(problems[0]?.path, 'steps.0');
    assert.match(problems[0]?.message ?? '', /^rebase: /);
    assert.deepEqual(outputs, [
      {
        kind: 'table',
        title: 'z',
        columns: ['date', 'z'],
        rows: [
          ['2024-01-01', 0],
          ['2024-01-02', 1],
          ['2024-01-03', 2],
        ],
      },
    ]);
  });

  test('a name nothing defines, and a series used where another kind was made', () => {
    const { problems } = run(
      spec(
        [
          { op: 'yoy', input: 'nope', as: 'y' },
          { op: 'beta', y: 'a', x: 'b', as: 'beta' },
          { op: 'log_returns', input: 'beta', as: 'l' },
        ],
        [],
      ),
    );
    assert.deepEqual(problems, [
      { path: 'steps.0', message: 'yoy: nothing is named nope before this step' },
      { path: 'steps.2', message: 'log_returns: beta is a regression, not a series' },
    ]);
  });
});

describe('outputs', () => {
  test('a line chart by date, with the title from the labels', () => {
    const { outputs } = run(spec([], [{ kind: 'line', values: ['a', 'b'] }]));
    assert.deepEqual(outputs, [
      {
        kind: 'line',
        title: 'Alpha, b',
        x: 'date',
        series: [
          { name: 'Alpha', x: DATES, y: [100, 120, 90, 130] },
          { name: 'b', x: ['2024-01-02', '2024-01-03', '2024-01-05'], y: [1, 2, 3] },
        ],
      },
    ]);
  });

  test('a table of two series is an outer join on their dates; statistics per series', () => {
    const problems: StepProblem[] = [];
    const values = new Map(read);
    const s = spec(
      [],
      [
        { kind: 'table', values: ['a', 'b'], title: 'Both' },
        { kind: 'stats', values: ['b'] },
      ],
    );
    assert.deepEqual(renderOutputs(s, values, problems), [
      {
        kind: 'table',
        title: 'Both',
        columns: ['date', 'Alpha', 'b'],
        rows: [
          ['2024-01-01', 100, null],
          ['2024-01-02', 120, 1],
          ['2024-01-03', 90, 2],
          ['2024-01-04', 130, null],
          ['2024-01-05', null, 3],
        ],
      },
      {
        kind: 'stats',
        title: 'b',
        rows: [
          {
            name: 'b',
            count: 3,
            first_date: '2024-01-02',
            last_date: '2024-01-05',
            mean: 2,
            std: 1,
            min: 1,
            max: 3,
            last: 3,
          },
        ],
      },
    ]);
    assert.deepEqual(problems, []);
  });

  test('a curve is a chart by tenor, named with its date', () => {
    const panel: Computed = {
      kind: 'panel',
      label: 'y',
      panel: {
        rows: [
          { date: '2024-01-02', label: '10 Yr', maturityMonths: 120, value: 4.0 },
          { date: '2024-01-02', label: '2 Yr', maturityMonths: 24, value: 4.3 },
        ],
      },
    };
    const { outputs, problems } = run(
      spec([{ op: 'curve', input: 'y', as: 'c' }], [{ kind: 'bar', values: ['c'] }]),
      new Map([['y', panel]]),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(outputs, [
      {
        kind: 'bar',
        title: 'c',
        x: 'label',
        series: [{ name: 'c 2024-01-02', x: ['2 Yr', '10 Yr'], y: [4.3, 4.0] }],
      },
    ]);
  });
});

describe('the result as CSV', () => {
  test('dated series joined on their dates, then each other table after an empty line', () => {
    const outputs: RenderedOutput[] = [
      {
        kind: 'line',
        title: 't',
        x: 'date',
        series: [{ name: 'Alpha', x: ['2024-01-01', '2024-01-02'], y: [1.5, null] }],
      },
      { kind: 'table', title: 't', columns: ['date', 'b, "quoted"'], rows: [['2024-01-02', 7]] },
      { kind: 'table', title: 'm', columns: ['', 'x'], rows: [['x', 1]] },
      {
        kind: 'stats',
        title: 's',
        rows: [
          {
            name: 'Alpha',
            count: 1,
            first_date: '2024-01-01',
            last_date: '2024-01-01',
            mean: 1.5,
            std: null,
            min: 1.5,
            max: 1.5,
            last: 1.5,
          },
        ],
      },
    ];
    assert.equal(
      resultCsv(outputs),
      [
        'date,Alpha,"b, ""quoted"""',
        '2024-01-01,1.5,',
        '2024-01-02,,7',
        '',
        ',x',
        'x,1',
        '',
        'name,count,first_date,last_date,mean,std,min,max,last',
        'Alpha,1,2024-01-01,2024-01-01,1.5,,1.5,1.5,1.5',
        '',
      ].join('\r\n'),
    );
  });

  test('a curve chart becomes a label table; nothing rendered is an empty line', () => {
    const curve: RenderedOutput = {
      kind: 'line',
      title: 'c',
      x: 'label',
      series: [{ name: 'c 2024-01-02', x: ['2 Yr'], y: [4.3] }],
    };
    assert.equal(resultCsv([curve]), 'label,c 2024-01-02\r\n2 Yr,4.3\r\n');
    assert.equal(resultCsv([]), '\r\n');
  });
});
