/** The `tmd` process: the CLI's composition root (the commands themselves are in src/cli/). */

import { type CliIo, cliLog, dispatch, helpFor, reportError, version, wantsHelp } from './cli/tmd.ts';
import { parseEnv } from './config.ts';
import { buildDeps, closeDeps, type Deps } from './deps.ts';

export type { CliIo };

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  if (argv[0] === '--version' || argv[0] === 'version') {
    io.stdout(version());
    return 0;
  }
  if (wantsHelp(argv)) {
    io.stdout(helpFor(argv));
    return argv.length === 0 ? 2 : 0;
  }
  let deps: Deps | undefined;
  try {
    const env = io.env === undefined ? parseEnv() : parseEnv(io.env);
    deps = await buildDeps({ env, log: cliLog(io), ...(io.now ? { now: io.now } : {}) });
    await dispatch(deps, io, argv);
    return 0;
  } catch (error) {
    return reportError(error, io);
  } finally {
    if (deps) await closeDeps(deps);
  }
}
