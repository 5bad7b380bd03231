import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recipes } from '../../src/domain/recipes.ts';
import { presentRecipeInfo, presentRecipeResult, recipeInfoOut, recipeOut } from '../../src/views/recipes.ts';

test("a recipe's answer puts its array in data and every other member in meta", () => {
  const view = presentRecipeResult({
    recipe: 'dow30-sandbox-smoke',
    count: 2,
    as_of: '2026-11-20',
    constituents: [{ symbol: 'AAPL' }, { symbol: 'MSFT' }],
  });
  assert.deepEqual(view, {
    data: [{ symbol: 'AAPL' }, { symbol: 'MSFT' }],
    meta: { recipe: 'dow30-sandbox-smoke', count: 2, as_of: '2026-11-20' },
  });
  assert.deepEqual(recipeOut.parse(view), view);
  assert.deepEqual(presentRecipeResult({ recipe: 'x', count: 0 }).data, []);
});

test('a recipe in the list carries its list cost and P0 flag', () => {
  const [first] = recipes;
  assert.ok(first);
  const view = presentRecipeInfo(first, 2, true);
  assert.deepEqual(view, { ...first, list_cost: 2, p0: true });
  assert.deepEqual(recipeInfoOut.parse(view), view);
});
