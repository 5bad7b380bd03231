import type { Services } from '../../services.ts';
import type { CliIo } from '../io.ts';

/** What every command is handed: the services, where to print, the service's clock. */
export interface CommandContext {
  deps: Services;
  io: CliIo;
  now: () => number;
}

/**
 * One command group (`tmd key ...`): `sub` is the word after the command, `rest` the arguments after
 * it. It returns false when it has no such sub-command, and the dispatcher answers "unknown command".
 */
export type CommandGroup = (ctx: CommandContext, sub: string | undefined, rest: string[]) => Promise<boolean>;
