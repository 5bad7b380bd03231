/**
 * fair-use.ts: the Workbench's entitlement (403 analysis_not_entitled with the packages that bring it)
 * and its fair use (429 fair_use_limit, with a reset time for a daily limit), from the service's own
 * package list.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Sku } from '../../../src/config.ts';
import {
  DAY_MS,
  entitlingPackages,
  FAIR_USE_DEFAULTS,
  fairUseOf,
  fairUseRefusal,
  nextUtcDay,
  readsPerRunRefusal,
  workbenchEntitlement,
} from '../../../src/domain/analysis/fair-use.ts';
import { AppError } from '../../../src/errors.ts';
import { account, caller, serviceConfig, T0 } from '../support.ts';

const config = serviceConfig();
const skuOf = (id: string) => config.pricing.commercial_skus.find((s) => s.id === id) as Sku;

/** Runs `fn`, returning the AppError it throws. */
function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof AppError);
    return error;
  }
  assert.fail('expected an AppError');
}

describe('fair use', () => {
  test('the defaults fill what a package leaves out; a package value wins', () => {
    assert.deepEqual(FAIR_USE_DEFAULTS, {
      runs_per_day: 100,
      reads_per_run: 20,
      reuse_minutes: 15,
      confirm_above_tokens: 50,
    });
    assert.deepEqual(fairUseOf(null), FAIR_USE_DEFAULTS);
    const sku = { ...skuOf('workbench'), fair_use: { runs_per_day: 3 } } as Sku;
    assert.deepEqual(fairUseOf(sku), { ...FAIR_USE_DEFAULTS, runs_per_day: 3 });
  });

  test('the next UTC day starts at midnight after now', () => {
    assert.equal(DAY_MS, 86_400_000);
    assert.equal(nextUtcDay(T0), Date.parse('2026-11-22T00:00:00Z'));
    assert.equal(nextUtcDay(Date.parse('2026-11-22T00:00:00Z')), Date.parse('2026-11-23T00:00:00Z'));
  });

  test('a daily limit says when it resets: retry-after in seconds, reset_at, the header', () => {
    const error = fairUseRefusal('Too many runs today.', 'runs_per_day', 100, T0);
    assert.equal(error.code, 'fair_use_limit');
    assert.equal(error.status, 429);
    assert.equal(error.message, 'Too many runs today.');
    // 15:00 to midnight is 9 hours.
    assert.deepEqual(error.extras, {
      limit: 'runs_per_day',
      value: 100,
      retry_after: 32_400,
      reset_at: '2026-11-22T00:00:00.000Z',
    });
    assert.deepEqual(error.headers, { 'retry-after': '32400' });
  });

  test('retry-after is at least one second, even in the last millisecond of a day', () => {
    const error = fairUseRefusal('x', 'runs_per_day', 1, Date.parse('2026-11-21T23:59:59.999Z'));
    assert.equal(error.extras.retry_after, 1);
  });

  test('a limit of one run names no reset time: waiting does not lift it', () => {
    const error = readsPerRunRefusal('This run makes 21 reads.', { ...FAIR_USE_DEFAULTS });
    assert.equal(error.code, 'fair_use_limit');
    assert.equal(error.message, 'This run makes 21 reads.');
    assert.deepEqual(error.extras, { limit: 'reads_per_run', value: 20 });
    assert.deepEqual(error.headers, {});
  });
});

describe('the Workbench entitlement', () => {
  test('the packages with analysis_assistant entitle', () => {
    assert.deepEqual(entitlingPackages(config), [{ id: 'workbench', name: 'Workbench' }]);
  });

  test('a wallet key or a session of a Workbench account: its account and fair use', () => {
    const holder = account({ packageId: 'workbench' });
    for (const kind of ['live', 'session'] as const) {
      assert.deepEqual(workbenchEntitlement(config, caller(kind, { account: holder })), {
        accountId: 'acc_1',
        fairUse: { runs_per_day: 100, reads_per_run: 20, reuse_minutes: 15, confirm_above_tokens: 50 },
      });
    }
  });

  test('sandbox and public-test keys never, whatever the account', () => {
    const sandbox = thrown(() => workbenchEntitlement(config, caller('sandbox')));
    assert.equal(sandbox.code, 'analysis_not_entitled');
    assert.equal(sandbox.status, 403);
    assert.equal(
      sandbox.message,
      'A sandbox key cannot use the Workbench: the composer and the assistant are for accounts with the Workbench package, through the Terminal or a wallet key.',
    );
    assert.deepEqual(sandbox.extras, { packages: ['workbench'] });
    const publicTest = thrown(() =>
      workbenchEntitlement(config, caller('public_test', { account: account({ packageId: 'workbench' }) })),
    );
    assert.match(publicTest.message, /^A public-test key cannot use the Workbench: /);
  });

  test('an account with another package or none is told which package brings it', () => {
    const pro = thrown(() =>
      workbenchEntitlement(config, caller('live', { account: account({ packageId: 'pro' }) })),
    );
    assert.equal(pro.code, 'analysis_not_entitled');
    assert.equal(
      pro.message,
      'The Workbench (the analysis composer and assistant) comes with the Workbench package; this account has the Pro package. An operator can assign it.',
    );
    assert.deepEqual(pro.extras, { packages: ['workbench'] });
    const none = thrown(() => workbenchEntitlement(config, caller('session')));
    assert.equal(
      none.message,
      'The Workbench (the analysis composer and assistant) comes with the Workbench package; this account has no package. An operator can assign it.',
    );
  });

  test('a live key with no account is refused as a caller without one', () => {
    const error = thrown(() => workbenchEntitlement(config, caller('live', { account: null })));
    assert.match(error.message, /^A wallet key cannot use the Workbench: /);
  });
});
