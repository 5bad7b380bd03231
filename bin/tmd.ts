#!/usr/bin/env -S node --disable-warning=ExperimentalWarning --max-semi-space-size=8 --max-old-space-size=1536
/** The `tmd` operator command: see src/cli/tmd.ts, or run `tmd help`. */
import { setPriority } from 'node:os';
import { text } from 'node:stream/consumers';
import { runCli } from '../src/tmd.ts';

// An import usually feeds a service running on the same machine: it yields the CPU to that service's
// reads (nice 10), taking longer rather than slowing sales.
if (process.argv[2] === 'import') {
  try {
    setPriority(10);
  } catch {
    // Not permitted here: the import runs at the usual priority.
  }
}

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (chunk) => process.stdout.write(chunk),
  stderr: (chunk) => process.stderr.write(chunk),
  readStdin: () => text(process.stdin),
  isTTY: process.stdout.isTTY === true,
  progress: process.stderr.isTTY === true,
});
