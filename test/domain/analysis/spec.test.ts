/**
 * spec.ts: the one schema of an analysis. What it accepts (with its defaults), what it refuses and the
 * path and message of each refusal, and the names each step reads and defines.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type AnalysisSpec,
  analysisName,
  analysisSpec,
  type StepSpec,
  stepInputs,
  stepOutputs,
} from '../../../src/domain/analysis/spec.ts';
import { compare } from './fixtures.ts';

const aapl = { id: 'aapl', dataset: 'stocks/prices', entity: { symbol: 'AAPL' }, field: 'close' };

/** The issues of a refused spec as [path, code, message]. */
function issues(input: unknown): [string, string, string][] {
  const parsed = analysisSpec.safeParse(input);
  assert.equal(parsed.success, false, 'expected the spec to be refused');
  return (parsed.error?.issues ?? []).map((i) => [i.path.join('.'), i.code, i.message]);
}

describe('analysisSpec accepts', () => {
  test('the fixture as it is', () => {
    assert.deepEqual(analysisSpec.parse(compare), compare);
  });

  test('no entity and no steps, filled in as {} and []', () => {
    const parsed = analysisSpec.parse({
      series: [{ id: 'y10', dataset: 'macro/treasury-yield-series', field: 'par_yield' }],
      outputs: [{ kind: 'line', values: ['y10'] }],
    });
    assert.deepEqual(parsed, {
      series: [{ id: 'y10', dataset: 'macro/treasury-yield-series', entity: {}, field: 'par_yield' }],
      steps: [],
      outputs: [{ kind: 'line', values: ['y10'] }],
    });
  });

  test('every op with its own arguments', () => {
    const steps: StepSpec[] = [
      { op: 'pct_change', input: 'aapl', as: 'a1', periods: 5 },
      { op: 'rolling_std', input: 'a1', as: 'a2', window: 2000 },
      { op: 'resample', input: 'aapl', as: 'a3', frequency: 'quarter', how: 'sum' },
      { op: 'align', inputs: ['aapl', 'a3'] },
      { op: 'beta', y: 'aapl', x: 'a3', as: 'b' },
      { op: 'curve', input: 'aapl', as: 'c', date: '2024-02-29' },
    ];
    const spec: AnalysisSpec = { series: [aapl], steps, outputs: [{ kind: 'table', values: ['b'] }] };
    assert.deepEqual(analysisSpec.parse(spec), spec);
  });
});

describe('analysisSpec refuses', () => {
  test('a name that is not lower-case, a date that is not YYYY-MM-DD or not real, an unknown output kind', () => {
    assert.deepEqual(
      issues({
        series: [{ ...aapl, id: 'AAPL', from: '2024-02-30', to: '2024-1-1' }],
        outputs: [{ kind: 'pie', values: [] }],
      }),
      [
        [
          'series.0.id',
          'invalid_format',
          'must be a lower-case name: a letter, then letters, digits or _ (32 at most)',
        ],
        ['series.0.from', 'custom', 'is not a real date'],
        ['series.0.to', 'invalid_format', 'must be YYYY-MM-DD'],
        ['series.0.to', 'custom', 'is not a real date'],
        ['outputs.0.kind', 'invalid_value', 'Invalid option: expected one of "line"|"bar"|"table"|"stats"'],
        ['outputs.0.values', 'too_small', 'Too small: expected array to have >=1 items'],
      ],
    );
  });

  test('a dataset that is not domain/name, an unknown key, a window of 0, an unknown op, no outputs', () => {
    const refused = issues({
      series: [{ ...aapl, dataset: 'prices', extra: 1 }],
      steps: [{ op: 'rolling_mean', input: 'aapl', as: 'm', window: 0 }, { op: 'nope' }],
      outputs: [],
    });
    assert.deepEqual(
      refused.map(([path, code]) => [path, code]),
      [
        ['series.0.dataset', 'invalid_format'],
        ['series.0', 'unrecognized_keys'],
        ['steps.0.window', 'too_small'],
        ['steps.1.op', 'invalid_union'],
        ['outputs', 'too_small'],
      ],
    );
    assert.equal(refused[0]?.[2], 'must be domain/name');
    assert.equal(refused[1]?.[2], 'Unrecognized key: "extra"');
  });

  test('a spread of one input, a window over 2000, eleven series', () => {
    const spread = { op: 'spread', inputs: ['aapl'], as: 'x' };
    assert.deepEqual(
      issues({ series: [aapl], steps: [spread], outputs: [{ kind: 'line', values: ['x'] }] }),
      [['steps.0.inputs', 'too_small', 'Too small: expected array to have >=2 items']],
    );
    const wide = { op: 'rolling_mean', input: 'aapl', as: 'm', window: 2001 };
    assert.deepEqual(
      issues({ series: [aapl], steps: [wide], outputs: [{ kind: 'line', values: ['m'] }] }).map((i) => i[0]),
      ['steps.0.window'],
    );
    const eleven = Array.from({ length: 11 }, (_, i) => ({ ...aapl, id: `s${i}` }));
    assert.deepEqual(
      issues({ series: eleven, outputs: [{ kind: 'line', values: ['s0'] }] }).map((i) => [i[0], i[1]]),
      [['series', 'too_big']],
    );
  });
});

describe('analysisName', () => {
  test('is trimmed, and refuses an empty name or a control character', () => {
    assert.equal(analysisName.parse('  AAPL vs MSFT  '), 'AAPL vs MSFT');
    assert.equal(analysisName.safeParse('   ').success, false);
    assert.deepEqual(
      analysisName.safeParse('a\u0007b').error?.issues.map((i) => i.message),
      ['must not contain control characters'],
    );
    assert.equal(analysisName.safeParse('x'.repeat(121)).success, false);
    assert.equal(analysisName.parse('x'.repeat(120)).length, 120);
  });
});

describe('the names a step reads and defines', () => {
  test('one input, several inputs, beta, align', () => {
    const rebase: StepSpec = { op: 'rebase', input: 'aapl', as: 'aapl_100' };
    assert.deepEqual([stepInputs(rebase), stepOutputs(rebase)], [['aapl'], ['aapl_100']]);
    const correlation: StepSpec = { op: 'correlation', inputs: ['a', 'b', 'c'], as: 'm' };
    assert.deepEqual([stepInputs(correlation), stepOutputs(correlation)], [['a', 'b', 'c'], ['m']]);
    const beta: StepSpec = { op: 'beta', y: 'aapl', x: 'spx', as: 'b' };
    assert.deepEqual([stepInputs(beta), stepOutputs(beta)], [['aapl', 'spx'], ['b']]);
    const align: StepSpec = { op: 'align', inputs: ['a', 'b'] };
    assert.deepEqual(
      [stepInputs(align), stepOutputs(align)],
      [
        ['a', 'b'],
        ['a', 'b'],
      ],
    );
  });

  test("the lists returned are copies, not the step's own arrays", () => {
    const align: StepSpec = { op: 'align', inputs: ['a', 'b'] };
    stepInputs(align).push('c');
    stepOutputs(align).push('d');
    assert.deepEqual(align.inputs, ['a', 'b']);
  });
});
