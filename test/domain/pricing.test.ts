import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  costEur,
  isP0,
  listCostOf,
  makePricing,
  nextTier,
  priceRead,
  tierFor,
  utcMonth,
} from '../../src/domain/pricing.ts';
import { serviceConfig } from './support.ts';

const pricing = makePricing(serviceConfig());
const tier = (level: number) =>
  pricing.tiers.find((t) => t.level === level) ?? assert.fail(`no tier ${level}`);

test('the configuration becomes exact integers: thresholds in micros, EUR per token in micro-euros', () => {
  assert.deepEqual(pricing.tierThresholdsMicros, [
    0n,
    500_000_000n,
    2_000_000_000n,
    5_000_000_000n,
    15_000_000_000n,
    50_000_000_000n,
    150_000_000_000n,
    500_000_000_000n,
  ]);
  assert.equal(pricing.microEurPerToken, 100_000n);
  assert.equal(pricing.terminalSurchargePercent, 35n);
  assert.equal(pricing.defaultCost, 2);
});

test('a dataset costs its configured list cost, else the default of 2; P0 is by domain', () => {
  assert.equal(listCostOf(pricing, 'no/such-dataset'), 2);
  const [priced, cost] = Object.entries(pricing.costs)[0] ?? ['', 0];
  assert.equal(listCostOf(pricing, priced), cost);
  assert.equal(isP0(pricing, 'equities/stock-prices'), true);
  assert.equal(isP0(pricing, 'calendar/events'), true);
  assert.equal(isP0(pricing, 'system/api-usage'), false);
  assert.equal(isP0(pricing, 'equities'), false, 'a key without a domain is not P0');
});

test('the tier is the highest whose threshold the month burn reaches, to the micro-token', () => {
  assert.equal(tierFor(pricing, 0n).name, 'Recruit');
  assert.equal(tierFor(pricing, 499_999_999n).name, 'Recruit');
  assert.equal(tierFor(pricing, 500_000_000n).name, 'Analyst');
  assert.equal(tierFor(pricing, 600_000_000_000n).name, 'Legend');
  assert.equal(nextTier(pricing, tier(1))?.name, 'Analyst');
  assert.equal(nextTier(pricing, tier(8)), null);
});

test('a read is priced with the tier discount and, from the Terminal, the 35% surcharge', () => {
  assert.equal(priceRead(pricing, 2, tier(1), 'rest'), 2_000_000n);
  assert.equal(priceRead(pricing, 2, tier(1), 'mcp'), 2_000_000n);
  assert.equal(priceRead(pricing, 2, tier(1), 'terminal'), 2_700_000n);
  assert.equal(priceRead(pricing, 5, tier(6), 'terminal'), 5_737_500n);
  assert.equal(priceRead(pricing, 1, tier(2), 'rest'), 980_000n);
  assert.equal(priceRead(pricing, 10, tier(8), 'rest'), 7_500_000n);
});

test('EUR is 0.1 per token, exact', () => {
  assert.equal(costEur(pricing, 2_700_000n), '0.27');
  assert.equal(costEur(pricing, 5_737_500n), '0.57375');
});

test('the UTC month of an instant, right at the boundaries', () => {
  assert.equal(utcMonth(Date.parse('2026-11-30T23:59:59.999Z')), '2026-11');
  assert.equal(utcMonth(Date.parse('2026-12-01T00:00:00Z')), '2026-12');
  assert.equal(utcMonth(Date.parse('2026-11-30T23:59:59.999Z')), '2026-11', 'the cache moves back too');
  assert.equal(utcMonth(Date.parse('2027-01-01T00:00:00Z')), '2027-01');
});
