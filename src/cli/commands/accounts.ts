/** `tmd account`, `tmd package` and `tmd early-bird`: an account, its package and its plan. */
import { parseArgs } from 'node:util';
import { newAccountInput, type Operator } from '../../domain/operator.ts';
import { presentAccountView } from '../../views/accounts.ts';
import { presentLedgerEntry } from '../../views/ledger.ts';
import { arg, parsed, UsageError } from '../args.ts';
import { print } from '../io.ts';
import type { CommandContext } from './command.ts';

/** The account as `tmd account show` prints it. */
async function printAccount(
  { deps, io, now }: CommandContext,
  account: Parameters<Operator['view']>[0],
): Promise<void> {
  print(io, presentAccountView(deps.config, await deps.operator.view(account), now()));
}

export async function accountCommand(ctx: CommandContext, sub: string | undefined, rest: string[]) {
  const { deps, io } = ctx;
  if (sub === 'create') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { 'password-stdin': { type: 'boolean', default: false } },
    });
    let password: string | undefined;
    if (values['password-stdin']) {
      if (!io.readStdin) throw new UsageError('--password-stdin: no standard input');
      password = (await io.readStdin()).replace(/\r?\n$/, '');
    }
    const input = parsed(
      newAccountInput,
      { email: arg(positionals, 0, 'email'), ...(password === undefined ? {} : { password }) },
      'account',
    );
    await printAccount(ctx, await deps.operator.createAccount(input));
    return true;
  }
  if (sub === 'show') {
    await printAccount(ctx, await deps.operator.findAccount(arg(rest, 0, 'account')));
    return true;
  }
  return false;
}

export async function packageCommand(ctx: CommandContext, sub: string | undefined, rest: string[]) {
  const { deps, io, now } = ctx;
  if (sub !== 'assign' && sub !== 'clear') return false;
  const ref = arg(rest, 0, 'account');
  const packageId = sub === 'assign' ? arg(rest, 1, 'package') : null;
  const { account, monthlyCredit } = await deps.operator.assignPackage(ref, packageId);
  print(io, {
    account: presentAccountView(deps.config, await deps.operator.view(account), now()),
    monthly_credit: monthlyCredit
      ? { ...presentLedgerEntry(monthlyCredit.entry), duplicate: monthlyCredit.duplicate }
      : null,
  });
  return true;
}

export async function earlyBirdCommand(ctx: CommandContext, sub: string | undefined, rest: string[]) {
  if (sub !== 'set' && sub !== 'clear') return false;
  await printAccount(ctx, await ctx.deps.operator.setEarlyBird(arg(rest, 0, 'account'), sub === 'set'));
  return true;
}
