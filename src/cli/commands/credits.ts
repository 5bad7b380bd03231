/** `tmd credit` and `tmd monthly-credit`: tokens into a wallet, once per idempotency key. */
import { parseArgs } from 'node:util';
import { formatMicros } from '../../domain/money.ts';
import { creditKinds, type OperatorCreditKind, tokenAmount } from '../../domain/operator.ts';
import { label } from '../../views/common.ts';
import { presentLedgerEntry, presentMonthlyCreditRun } from '../../views/ledger.ts';
import { arg, parsed, UsageError } from '../args.ts';
import { print } from '../io.ts';
import type { CommandContext } from './command.ts';

export async function creditCommand({ deps, io }: CommandContext, sub: string | undefined, rest: string[]) {
  const { values, positionals } = parseArgs({
    args: sub === undefined ? rest : [sub, ...rest],
    allowPositionals: true,
    options: {
      'idempotency-key': { type: 'string' },
      kind: { type: 'string', default: 'topup' },
      memo: { type: 'string' },
    },
  });
  const ref = arg(positionals, 0, 'account');
  const amountMicros = parsed(tokenAmount, arg(positionals, 1, 'tokens'), '<tokens>');
  const idempotencyKey = values['idempotency-key'];
  if (!idempotencyKey)
    throw new UsageError('--idempotency-key is required: a credit is applied once per key');
  if (!(creditKinds as readonly string[]).includes(values.kind))
    throw new UsageError(`--kind must be one of ${creditKinds.join(', ')}`);
  const outcome = await deps.operator.creditTokens(ref, {
    amountMicros,
    idempotencyKey,
    kind: values.kind as OperatorCreditKind,
    ...(values.memo === undefined ? {} : { memo: parsed(label(200), values.memo, '--memo') }),
    actor: 'cli',
  });
  print(io, {
    entry: presentLedgerEntry(outcome.entry),
    balance: formatMicros(outcome.balanceMicros),
    replayed: outcome.duplicate,
  });
  return true;
}

export async function monthlyCreditCommand({ deps, io }: CommandContext) {
  const run = await deps.operator.runMonthlyCredits();
  print(io, presentMonthlyCreditRun(run));
  return true;
}
