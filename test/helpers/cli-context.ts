/** A `tmd` command's context over stand-in services, with what it printed. */
import type { CommandContext } from '../../src/cli/commands/command.ts';
import type { Services } from '../../src/services.ts';

export const CLI_NOW = Date.parse('2026-11-28T12:00:00Z');

export function cliContext(services: Record<string, unknown>, isTTY = false) {
  let out = '';
  let err = '';
  const ctx: CommandContext = {
    deps: { now: () => CLI_NOW, ...services } as unknown as Services,
    io: {
      isTTY,
      stdout: (text) => {
        out += text;
      },
      stderr: (text) => {
        err += text;
      },
    },
    now: () => CLI_NOW,
  };
  return { ctx, out: () => out, err: () => err, json: () => JSON.parse(out) as unknown };
}
