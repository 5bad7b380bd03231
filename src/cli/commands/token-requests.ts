/** `tmd token-requests`: the open requests for tokens without a card, credited or declined. */
import { parseArgs } from 'node:util';
import { presentTokenRequest } from '../../views/billing.ts';
import { arg, UsageError } from '../args.ts';
import { print } from '../io.ts';
import type { CommandContext } from './command.ts';

export async function tokenRequestsCommand(
  { deps, io }: CommandContext,
  sub: string | undefined,
  rest: string[],
) {
  if (sub === undefined) {
    print(io, { data: (await deps.billing.openRequests()).map(presentTokenRequest) });
    return true;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { reason: { type: 'string' } },
  });
  const id = arg(positionals, 0, 'request-id');
  if (sub === 'credit') {
    print(io, presentTokenRequest(await deps.billing.settle(id, { credit: true, actor: 'tmd' })));
    return true;
  }
  if (sub === 'decline') {
    if (!values.reason?.trim()) throw new UsageError('decline needs --reason <text>: the account sees it');
    print(
      io,
      presentTokenRequest(await deps.billing.settle(id, { credit: false, reason: values.reason.trim() })),
    );
    return true;
  }
  return false;
}
