/** `tmd key create` and `tmd key caps`: a live key for an account, and a key's spending caps. */
import { parseArgs } from 'node:util';
import { capAmount } from '../../domain/operator.ts';
import { keyExpiry, label } from '../../views/common.ts';
import { presentKey } from '../../views/keys.ts';
import { arg, parsed, UsageError } from '../args.ts';
import { print } from '../io.ts';
import type { CommandContext } from './command.ts';

async function createKey({ deps, io, now }: CommandContext, rest: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { name: { type: 'string' }, 'expires-at': { type: 'string' } },
  });
  const expires = values['expires-at'];
  // The API's rules: an ISO 8601 time with its zone (Z or an offset), never the local time; a
  // name of 1 to 100 characters without control characters.
  if (expires !== undefined && !keyExpiry.safeParse(expires).success)
    throw new UsageError(
      '--expires-at must be an ISO 8601 time with Z or an offset, e.g. 2027-01-01T00:00:00Z',
    );
  const expiresAt = expires === undefined ? null : Date.parse(expires);
  const name = values.name === undefined ? null : parsed(label(100).min(1), values.name, '--name');
  const issued = await deps.operator.createKey(arg(positionals, 0, 'account'), name, expiresAt);
  print(io, { ...presentKey(issued.record, now()), key: issued.secret });
}

async function setCaps({ deps, io, now }: CommandContext, rest: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { daily: { type: 'string' }, monthly: { type: 'string' } },
  });
  const keyId = arg(positionals, 0, 'key-id');
  // A cap not given keeps its stored value.
  const cap = (given: string | undefined, flag: string) =>
    given === undefined ? undefined : given === 'none' ? null : parsed(capAmount, given, flag);
  const key = await deps.operator.setKeyCaps(keyId, {
    dailyCapMicros: cap(values.daily, '--daily'),
    monthlyCapMicros: cap(values.monthly, '--monthly'),
  });
  print(io, presentKey(key, now()));
}

export async function keyCommand(ctx: CommandContext, sub: string | undefined, rest: string[]) {
  if (sub === 'create') await createKey(ctx, rest);
  else if (sub === 'caps') await setCaps(ctx, rest);
  else return false;
  return true;
}
