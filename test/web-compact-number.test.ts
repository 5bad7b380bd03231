/** The chart's axis labels: short enough for a narrow axis, distinct from tick to tick. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compactNumber } from '../web/src/chart/compact.ts';

test('large values get a suffix and at most three significant digits', () => {
  assert.equal(compactNumber(1_234_567), '1.23M');
  assert.equal(compactNumber(350_000), '350k');
  assert.equal(compactNumber(12_500_000_000), '12.5B');
  assert.equal(compactNumber(-2_000_000), '-2M');
  assert.equal(compactNumber(999), '999');
  assert.equal(compactNumber(0), '0');
});

test('small values keep the digits that tell them apart', () => {
  assert.equal(compactNumber(246.9), '247');
  assert.equal(compactNumber(12.345), '12.35');
  assert.equal(compactNumber(0.0345), '0.0345');
  assert.equal(compactNumber(4.25, 0.05), '4.25');
});

test('ticks a step apart never print the same label', () => {
  const ticks = [1_000_000, 1_050_000, 1_100_000, 1_150_000];
  const labels = ticks.map((t) => compactNumber(t, 50_000));
  assert.deepEqual(labels, ['1M', '1.05M', '1.1M', '1.15M']);
  assert.equal(new Set(labels).size, ticks.length);
});
