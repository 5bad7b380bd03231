import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chargeMicros,
  decimalToMicros,
  divRoundHalfUp,
  eurString,
  formatMicros,
  MICROS_PER_TOKEN,
  percentToBasisPoints,
  tokensToMicros,
} from '../../src/domain/money.ts';

test('tokens convert to micro-tokens exactly, from integers, bigints and decimals', () => {
  assert.equal(MICROS_PER_TOKEN, 1_000_000n);
  assert.equal(tokensToMicros(3), 3_000_000n);
  assert.equal(tokensToMicros(3n), 3_000_000n);
  assert.equal(tokensToMicros(0.000001), 1n);
  assert.equal(tokensToMicros(12.5), 12_500_000n);
});

test('decimalToMicros parses up to six decimals and refuses anything else', () => {
  assert.equal(decimalToMicros(' 12.5 '), 12_500_000n);
  assert.equal(decimalToMicros('-0.000001'), -1n);
  assert.equal(decimalToMicros('7'), 7_000_000n);
  for (const bad of ['0.0000001', '1e3', 'abc', '', '.5']) {
    assert.throws(() => decimalToMicros(bad), RangeError, bad);
  }
});

test('formatMicros is the exact decimal without trailing zeros', () => {
  assert.equal(formatMicros(5_737_500n), '5.7375');
  assert.equal(formatMicros(2_000_000n), '2');
  assert.equal(formatMicros(0n), '0');
  assert.equal(formatMicros(1n), '0.000001');
  assert.equal(formatMicros(-1_500_000n), '-1.5');
});

test('percentages become basis points; more than two decimals is refused', () => {
  assert.equal(percentToBasisPoints(2), 200n);
  assert.equal(percentToBasisPoints(12.5), 1250n);
  assert.throws(() => percentToBasisPoints(1.234), RangeError);
});

test('division rounds half up', () => {
  assert.equal(divRoundHalfUp(5n, 2n), 3n);
  assert.equal(divRoundHalfUp(4n, 3n), 1n);
  assert.equal(divRoundHalfUp(5n, 3n), 2n);
});

test('a charge takes the discount, then the Terminal surcharge, rounding once at the end', () => {
  const charge = (listCostTokens: number, discountPct: number, terminal: boolean) =>
    chargeMicros({
      listCostTokens,
      discountBasisPoints: percentToBasisPoints(discountPct),
      terminal,
      terminalSurchargePercent: 35n,
    });
  assert.equal(charge(2, 0, false), 2_000_000n);
  assert.equal(charge(2, 0, true), 2_700_000n);
  assert.equal(charge(5, 15, true), 5_737_500n);
  assert.equal(charge(1, 12, true), 1_188_000n);
  // 1 token less 0.333% is 0.99667 tokens: exact at the micro-token.
  assert.equal(
    chargeMicros({
      listCostTokens: 1,
      discountBasisPoints: 33n,
      terminal: false,
      terminalSurchargePercent: 0n,
    }),
    996_700n,
  );
});

test('EUR strings are exact at twelve decimals, trailing zeros trimmed', () => {
  assert.equal(eurString(2_700_000n, 100_000n), '0.27');
  assert.equal(eurString(1n, 100_000n), '0.0000001');
  assert.equal(eurString(-5_000_000n, 100_000n), '-0.5');
  assert.equal(eurString(0n, 100_000n), '0');
});
