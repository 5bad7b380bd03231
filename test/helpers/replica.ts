/**
 * A PostgreSQL primary and a hot standby streaming from it, each its own cluster in a temporary folder
 * (initdb, pg_basebackup -R, pg_ctl), on ports of their own: the machine's server and its configuration
 * are left alone. The servers run as the `postgres` user when the tests run as root (PostgreSQL refuses
 * root). Gated as the other PostgreSQL tests: with CI=true missing binaries fail the run.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const inCi = process.env.CI === 'true';

export interface ReplicatedPair {
  primaryUrl: string;
  standbyUrl: string;
  stop(): void;
}

function binDir(): string | null {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    return existsSync(join(dir, 'initdb')) ? dir : null;
  } catch {
    return null;
  }
}

/** The pair, or `skip` saying why there is none here. */
export function replicatedPair(): ReplicatedPair | { skip: string } {
  const bin = binDir();
  if (!bin) {
    const why =
      'PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) were not found by pg_config --bindir';
    if (inCi) throw new Error(why);
    return { skip: why };
  }
  const dir = mkdtempSync(join(tmpdir(), 'tmd-replica-'));
  const root = userInfo().uid === 0;
  if (root) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, id('-u'), id('-g'));
  }
  const run = (tool: string, args: string[]) =>
    root
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { stdio: 'pipe' })
      : execFileSync(join(bin, tool), args, { stdio: 'pipe' });
  const base = 20_000 + Math.floor(Math.random() * 20_000);
  const [primaryPort, standbyPort] = [base, base + 1];
  const primary = join(dir, 'primary');
  const standby = join(dir, 'standby');
  const started: string[] = [];
  const stop = () => {
    for (const data of started.reverse()) {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already stopped.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const options = (port: number) =>
    `-c port=${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off`;
  try {
    // initdb's pg_hba.conf trusts local and loopback connections, replication ones included.
    run('initdb', ['-D', primary, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    run('pg_ctl', ['-D', primary, '-o', options(primaryPort), '-l', join(dir, 'primary.log'), '-w', 'start']);
    started.push(primary);
    run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      standby,
      '-R',
    ]);
    run('pg_ctl', ['-D', standby, '-o', options(standbyPort), '-l', join(dir, 'standby.log'), '-w', 'start']);
    started.push(standby);
  } catch (error) {
    stop();
    throw error;
  }
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${primaryPort}/postgres`,
    standbyUrl: `postgres://postgres@127.0.0.1:${standbyPort}/postgres`,
    stop,
  };
}
