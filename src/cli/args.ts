/** The pieces of a command line: positionals, schema-checked values, `field=value` pairs; usage errors. */

/** A command line that does not say what to do (exit 2, with the usage). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A command that did its work and reported it, but whose work failed (exit 1). */
export class CommandFailed extends Error {
  override name = 'CommandFailed';
}

/** The positional at `index`, or a usage error naming it as `<name>`. */
export function arg(positionals: readonly string[], index: number, name: string): string {
  const value = positionals[index];
  if (value === undefined) throw new UsageError(`missing <${name}>`);
  return value;
}

/** A value checked by a zod schema; its messages become a usage error under `name`. */
export function parsed<T>(
  schema: {
    safeParse(
      v: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } };
  },
  value: unknown,
  name: string,
): T {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new UsageError(`${name}: ${result.error.issues.map((i) => i.message).join('; ')}`);
  return result.data;
}

/** `field=value` pairs into an object; a value may itself hold '='. */
export function pairs(list: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`${flag} takes <field>=<value>, got "${item}"`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}
