/** planner-range.ts: the dates a question names, read into a range and taken out of the question. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseRange } from '../../../src/domain/analysis/planner-range.ts';

const TODAY = '2026-11-21';
const rangeOf = (text: string) => parseRange(` ${text} `, TODAY).range;

describe('the dates of a question', () => {
  test('since a day, a year or a month; between two days; the last n units; year to date', () => {
    assert.deepEqual(rangeOf('aapl since 2024-03-01'), { from: '2024-03-01', phrase: 'since 2024-03-01' });
    assert.deepEqual(rangeOf('aapl since 2024').from, '2024-01-01');
    assert.deepEqual(rangeOf('aapl since december').from, '2025-12-01');
    assert.deepEqual(rangeOf('aapl since january').from, '2026-01-01');
    assert.deepEqual(
      [rangeOf('between 2024-01-01 and 2024-06-30').from, rangeOf('between 2024-01-01 and 2024-06-30').to],
      ['2024-01-01', '2024-06-30'],
    );
    assert.deepEqual(
      [rangeOf('in march 2025').from, rangeOf('in march 2025').to],
      ['2025-03-01', '2025-03-31'],
    );
    assert.equal(rangeOf('over the last 3 months').from, '2026-08-21');
    assert.equal(rangeOf('last 52 weeks').from, '2025-11-22');
    assert.equal(rangeOf('ytd').from, '2026-01-01');
  });

  test('the range is taken out of the rest of the question', () => {
    assert.equal(parseRange(' aapl since 2024 close ', TODAY).rest, ' aapl   close ');
  });

  test('a date it cannot read, an impossible date and a range ending before it starts are problems', () => {
    assert.match(
      rangeOf('aapl since last tuesday').problem ?? '',
      /^I could not read the date in "since last tuesday"/,
    );
    assert.equal(
      rangeOf('since 2024-02-30').problem,
      'There is no date 2024-02-30: write a day of the calendar as YYYY-MM-DD, e.g. 2024-01-31.',
    );
    assert.equal(
      rangeOf('between 2024-06-01 and 2024-01-01').problem,
      'The range 2024-06-01 to 2024-01-01 ends before it starts: name the earlier date first.',
    );
  });
});
