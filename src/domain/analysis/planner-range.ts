/**
 * The dates a question to the built-in planner names ("since 2024", "last 3 months", "in March 2025",
 * "between 2024-01-01 and 2024-06-30"), read into a range and taken out of the question.
 */

const DAY_MS = 86_400_000;

/** YYYY-MM-DD of a time, or null past what a date of an analysis can name (years 0000 to 9999). */
function isoDay(d: Date): string | null {
  if (Number.isNaN(d.getTime())) return null;
  const day = d.toISOString().slice(0, 10);
  return /^\d{4}-\d{2}-\d{2}$/.test(day) ? day : null;
}

export function addDays(date: string, days: number): string | null {
  return isoDay(new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS));
}

function minusMonths(date: string, months: number): string | null {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() - months);
  return isoDay(d);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] as const;
const MONTH =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';

/**
 * The first day of a named month: of the year given, else the latest such month that has begun by today
 * ("since January" in November is this January; "since December" in November is last December).
 */
function monthStart(name: string, year: string | undefined, today: string): string {
  const month = MONTHS.indexOf(name.slice(0, 3) as (typeof MONTHS)[number]) + 1;
  const mm = String(month).padStart(2, '0');
  if (year) return `${year}-${mm}-01`;
  const thisYear = Number(today.slice(0, 4));
  const start = `${thisYear}-${mm}-01`;
  return start <= today ? start : `${String(thisYear - 1).padStart(4, '0')}-${mm}-01`;
}

/** Whether a YYYY-MM-DD names a day of the calendar (not 2024-13-45 or 2024-02-30). */
function isRealDate(date: string): boolean {
  return isoDay(new Date(`${date}T00:00:00Z`)) === date;
}

export interface Range {
  from?: string;
  to?: string;
  /** A single date (the curve "on" a date). */
  on?: string;
  phrase?: string;
  /** Why the dates named cannot be read (an impossible date, a range ending before it starts). */
  problem?: string;
}

/** The date range a question names, and the question with it taken out. */
export function parseRange(text: string, today: string): { range: Range; rest: string } {
  const range: Range = {};
  let rest = text;
  const take = (re: RegExp, f: (m: RegExpMatchArray) => void) => {
    const m = rest.match(re);
    if (!m) return false;
    f(m);
    range.phrase ??= m[0].trim();
    rest = rest.replace(m[0], ' ');
    return true;
  };
  const d = '(\\d{4}-\\d{2}-\\d{2})';
  take(new RegExp(`\\b(?:between|from) ${d} (?:and|to|until) ${d}`), (m) => {
    range.from = m[1];
    range.to = m[2];
  }) ||
    take(new RegExp(`\\b(?:since|from|starting|after) ${d}`), (m) => {
      range.from = m[1];
    }) ||
    take(/\b(?:since|from|starting) (\d{4})\b/, (m) => {
      range.from = `${m[1]}-01-01`;
    }) ||
    take(
      new RegExp(`\\b(?:since|from|starting|after) (?:the start of )?${MONTH}(?:,? (\\d{4}))?\\b`),
      (m) => {
        range.from = monthStart(m[1] as string, m[2], today);
      },
    ) ||
    take(new RegExp(`\\bin ${MONTH},? (\\d{4})\\b`), (m) => {
      range.from = monthStart(m[1] as string, m[2], today);
      range.to = addDays(minusMonths(range.from, -1) ?? range.from, -1) ?? range.from;
    }) ||
    take(/\bin (\d{4})\b/, (m) => {
      range.from = `${m[1]}-01-01`;
      range.to = `${m[1]}-12-31`;
    }) ||
    take(
      /\b(?:over |in |for )?(?:the )?(?:last|past|trailing) (\d+)? ?(days?|weeks?|months?|years?)\b/,
      (m) => {
        const n = m[1] ? Number(m[1]) : 1;
        const unit = (m[2] as string).replace(/s$/, '');
        const from =
          unit === 'day'
            ? addDays(today, -n)
            : unit === 'week'
              ? addDays(today, -7 * n)
              : minusMonths(today, unit === 'month' ? n : 12 * n);
        if (from === null) {
          range.problem = `The last ${m[1] ?? ''} ${m[2]} reach back before any date there is: ask for a shorter span, e.g. "last 5 years".`;
        } else {
          range.from = from;
        }
      },
    ) ||
    take(/\b(?:ytd|year to date)\b/, () => {
      range.from = `${today.slice(0, 4)}-01-01`;
    });
  take(new RegExp(`\\b(?:on|as of|at) ${d}`), (m) => {
    range.on = m[1];
  });
  take(new RegExp(`\\b(?:until|to|through) ${d}`), (m) => {
    range.to = m[1];
  });
  // A date constraint is never dropped: one the forms above do not read is asked back.
  const unread = rest.match(
    /\b(?:since|until|before|after|through) (?!the (?:last|past)\b)[^ ,.;]+(?: [^ ,.;]+)?/,
  );
  if (unread && !range.problem) {
    range.problem = `I could not read the date in "${unread[0].trim()}": write it as YYYY-MM-DD (since 2026-01-15), a year (since 2024), a month (since January, since March 2025) or a span (last 3 months).`;
  }
  const impossible = [range.from, range.to, range.on].find((date) => date !== undefined && !isRealDate(date));
  if (impossible !== undefined) {
    range.problem = `There is no date ${impossible}: write a day of the calendar as YYYY-MM-DD, e.g. 2024-01-31.`;
  } else if (range.from !== undefined && range.to !== undefined && range.to < range.from) {
    range.problem = `The range ${range.from} to ${range.to} ends before it starts: name the earlier date first.`;
  }
  return { range, rest };
}
