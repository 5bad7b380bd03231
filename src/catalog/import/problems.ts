/** Every problem found, each naming its line (or record), up to MAX_PROBLEMS. */
export class ImportError extends Error {
  readonly problems: readonly string[];
  constructor(summary: string, problems: readonly string[]) {
    super(problems.length > 0 ? `${summary}\n  ${problems.join('\n  ')}` : summary);
    this.name = 'ImportError';
    this.problems = problems;
  }
}

export const MAX_PROBLEMS = 20;

/** The problems found so far: every one counted, the first MAX_PROBLEMS kept. */
export class Problems {
  readonly listed: string[] = [];
  count = 0;
  add(problem: string): void {
    if (++this.count <= MAX_PROBLEMS) this.listed.push(problem);
  }
  throwIfAny(): void {
    if (this.count === 0) return;
    const more = this.count > MAX_PROBLEMS ? ` (the first ${MAX_PROBLEMS} are listed)` : '';
    throw new ImportError(
      `${this.count} invalid value(s) in the file; nothing was imported${more}.`,
      this.listed,
    );
  }
}
