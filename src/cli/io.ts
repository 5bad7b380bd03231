/** What a command is given to talk through, and how its answer is printed: JSON, or lines for a person. */

export interface CliIo {
  /** The environment to configure from; process.env (read by config.ts) when absent. */
  env?: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Standard output is a terminal: answers are printed for a person unless --json is given. */
  isTTY?: boolean;
  /** Standard error is a terminal: a long import shows its progress there. */
  progress?: boolean;
  /** All of standard input, for --password-stdin. */
  readStdin?: () => Promise<string>;
  now?: () => number;
}

/** The answer: JSON for scripts (--json, or not a terminal), else a few aligned lines for a person. */
export const print = (io: CliIo, value: unknown) =>
  io.stdout(io.isTTY ? `${humanText(value, '')}\n` : `${JSON.stringify(value, null, 2)}\n`);

const scalarText = (value: unknown) =>
  value === null || value === undefined
    ? '-'
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);
const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A list of objects as a table: a header of their keys, one line each, columns padded. */
function table(items: readonly Record<string, unknown>[], indent: string): string {
  const keys = [...new Set(items.flatMap((item) => Object.keys(item)))];
  const cells = [keys, ...items.map((item) => keys.map((k) => scalarText(item[k])))];
  const widths = keys.map((_, i) => Math.max(...cells.map((row) => (row[i] as string).length)));
  return cells
    .map(
      (row) =>
        indent +
        row
          .map((c, i) => c.padEnd(widths[i] as number))
          .join('  ')
          .trimEnd(),
    )
    .join('\n');
}

export function humanText(value: unknown, indent: string): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return `${indent}(none)`;
    if (value.every(isRecord)) return table(value, indent);
    return indent + value.map(scalarText).join(', ');
  }
  if (!isRecord(value)) return indent + scalarText(value);
  const width = Math.max(0, ...Object.keys(value).map((k) => k.length));
  return Object.entries(value)
    .map(([key, item]) => {
      const name = `${indent}${key.replaceAll('_', ' ')}`;
      if (isRecord(item) || (Array.isArray(item) && item.length > 0 && item.every(isRecord)))
        return `${name}:\n${humanText(item, `${indent}  `)}`;
      return `${name.padEnd(indent.length + width)}  ${humanText(item, '').trimStart()}`;
    })
    .join('\n');
}
