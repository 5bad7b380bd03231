/** A served request's cost as every face shows it: one name per figure, the headers, the MCP figures. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makePricing } from '../../src/domain/pricing.ts';
import {
  COST_META_KEY,
  costHeaders,
  costNote,
  costView,
  meteredMeta,
  readCostView,
  toolCostFigures,
} from '../../src/views/cost.ts';
import { baseConfig } from '../helpers/server.ts';

const figures = {
  costMicros: 5_737_500n,
  burnedMicros: 5_737_500n,
  balanceMicros: 94_262_500n,
  outcome: 'charged' as const,
};

test('costView prices the burn; readCostView takes the euros the read came with', () => {
  const view = {
    token_cost: '5.7375',
    tokens_burned: '5.7375',
    cost_eur: '0.57375',
    credits_remaining: '94.2625',
    outcome: 'charged',
  };
  assert.deepEqual(costView(makePricing(baseConfig()), figures), view);
  assert.deepEqual(readCostView({ ...figures, listCost: 5, costEur: '0.57375' }), view);
});

test('the four cost headers carry the same figures under their HTTP names', () => {
  const view = readCostView({ ...figures, burnedMicros: 0n, outcome: 'notional', listCost: 5, costEur: '0' });
  assert.deepEqual(costHeaders(view), {
    'x-token-cost': '5.7375',
    'x-request-tokens': '0',
    'x-request-cost-eur': '0',
    'x-credits-remaining': '94.2625',
  });
});

test('MCP figures use the shared names, keep the two documented old ones, and read as one line', () => {
  const view = readCostView({ ...figures, burnedMicros: 0n, outcome: 'notional', listCost: 5, costEur: '0' });
  const tool = toolCostFigures(view, 5);
  assert.deepEqual(tool, {
    token_cost: '5.7375',
    tokens_burned: '0',
    cost_eur: '0',
    credits_remaining: '94.2625',
    list_cost: '5',
    outcome: 'notional',
    request_tokens: '0',
    request_cost_eur: '0',
  });
  assert.deepEqual(meteredMeta(tool), { [COST_META_KEY]: tool });
  assert.equal(
    costNote(tool),
    'Cost: 5.7375 tokens (list 5, notional: a public-test key burns nothing on P0 reads); burned 0 tokens = 0 EUR; 94.2625 tokens left.',
  );
  assert.equal(
    costNote({ ...tool, outcome: 'grandfathered' }),
    'Cost: 5.7375 tokens (list 5, grandfathered: served at zero burn (early_bird)); burned 0 tokens = 0 EUR; 94.2625 tokens left.',
  );
});
