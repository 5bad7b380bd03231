/** `tmd collect`: one run of a collector now, or every source's status. */
import { parseArgs } from 'node:util';
import { presentCollectionRun, presentCollectorStatus } from '../../views/collectors.ts';
import { arg, CommandFailed, UsageError } from '../args.ts';
import { print } from '../io.ts';
import type { CommandContext } from './command.ts';

export async function collectCommand(
  { deps, io, now }: CommandContext,
  sub: string | undefined,
  rest: string[],
) {
  const { values, positionals } = parseArgs({
    args: sub === undefined ? rest : [sub, ...rest],
    allowPositionals: true,
    options: {
      since: { type: 'string' },
      backfill: { type: 'boolean', default: false },
      status: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  if (values.status) {
    const at = now();
    print(io, { data: (await deps.collections.status()).map((s) => presentCollectorStatus(s, at)) });
    return true;
  }
  if (values.since !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(values.since))
    throw new UsageError('--since must be a date, YYYY-MM-DD');
  const run = await deps.collections.run(arg(positionals, 0, 'source'), {
    ...(values.since === undefined ? {} : { since: values.since }),
    backfill: values.backfill,
  });
  print(io, presentCollectionRun(run));
  if (run.outcome === 'failed') throw new CommandFailed(`${run.source}: the run failed: ${run.error}`);
  return true;
}
