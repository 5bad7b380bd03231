/**
 * The dates of sample rows: which days a daily sample skips, and where a sample starts and ends.
 *
 * A sample ends now: its last period is the latest one on or before `now` (a month, quarter or year
 * dated on its first day stands for the whole period, so it is last once the period has ended). A
 * `scheduled` sample (calendars of releases) keeps its configured span from `sample.from` instead,
 * future included.
 */
import type { DatasetSample, SampleCalendar, SampleStep } from './types.ts';

export const MS_DAY = 86_400_000;
const MS_HOUR = 3_600_000;

/** 0 = Sunday ... 6 = Saturday; day 0 (1970-01-01) was a Thursday. */
function weekday(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

function dayOf(year: number, month: number, date: number): number {
  return Date.UTC(year, month, date) / MS_DAY;
}

/** The nth (1-based) given weekday of a month, or with n = -1 its last. */
function nthWeekday(year: number, month: number, wd: number, n: number): number {
  if (n < 0) {
    const last = dayOf(year, month + 1, 0);
    return last - ((weekday(last) - wd + 7) % 7);
  }
  const first = dayOf(year, month, 1);
  return first + ((wd - weekday(first) + 7) % 7) + (n - 1) * 7;
}

/** Easter Sunday (the anonymous Gregorian computus). */
function easter(year: number): number {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const date = ((h + l - 7 * m + 114) % 31) + 1;
  return dayOf(year, month - 1, date);
}

/** A fixed-date holiday on a Saturday is observed the Friday before, on a Sunday the Monday after. */
function observed(day: number): number {
  const wd = weekday(day);
  return wd === 6 ? day - 1 : wd === 0 ? day + 1 : day;
}

const holidayCache = new Map<number, Set<number>>();

/**
 * The NYSE's regular full-day holidays of a year: New Year's Day (on a Sunday, the Monday after; on a
 * Saturday, not observed, as the exchange's rule keeps the last day of the year open), Martin Luther
 * King Jr. Day, Washington's Birthday, Good Friday, Memorial Day, Juneteenth (from 2022), Independence
 * Day, Labor Day, Thanksgiving and Christmas, weekend ones observed on the nearest weekday. Unscheduled
 * closures (days of mourning, storms) are not in it.
 */
export function usMarketHolidays(year: number): ReadonlySet<number> {
  let days = holidayCache.get(year);
  if (days) return days;
  const newYear = dayOf(year, 0, 1);
  days = new Set<number>([
    nthWeekday(year, 0, 1, 3),
    nthWeekday(year, 1, 1, 3),
    easter(year) - 2,
    nthWeekday(year, 4, 1, -1),
    observed(dayOf(year, 6, 4)),
    nthWeekday(year, 8, 1, 1),
    nthWeekday(year, 10, 4, 4),
    observed(dayOf(year, 11, 25)),
  ]);
  if (weekday(newYear) !== 6) days.add(observed(newYear));
  if (year >= 2022) days.add(observed(dayOf(year, 5, 19)));
  holidayCache.set(year, days);
  return days;
}

/** Whether a day (days since 1970-01-01) is a US market trading day. */
export function isUsTradingDay(day: number): boolean {
  const wd = weekday(day);
  if (wd === 0 || wd === 6) return false;
  return !usMarketHolidays(new Date(day * MS_DAY).getUTCFullYear()).has(day);
}

/** Whether a daily sample on this calendar has a row on the day; without a calendar, every day. */
export function isCalendarDay(day: number, calendar: SampleCalendar | undefined): boolean {
  if (calendar === 'us-market') return isUsTradingDay(day);
  if (calendar === 'weekdays') return weekday(day) !== 0 && weekday(day) !== 6;
  return true;
}

/** The latest trading day on or before the day. */
export function tradingDayOnOrBefore(day: number): number {
  let d = day;
  while (!isUsTradingDay(d)) d--;
  return d;
}

function lastDayOfMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

function isMonthEnd(ms: number): boolean {
  const d = new Date(ms);
  return d.getUTCDate() === lastDayOfMonth(d.getUTCFullYear(), d.getUTCMonth());
}

const STEP_MONTHS: Partial<Record<SampleStep, number>> = { month: 1, quarter: 3, year: 12 };

/** Period p of a month, quarter or year sample; p may be negative. A month-end `from` stays on month ends. */
function monthPeriodMs(fromMs: number, months: number, p: number, monthEnd: boolean): number {
  const from = new Date(fromMs);
  const m = from.getUTCMonth() + p * months;
  const year = from.getUTCFullYear() + Math.floor(m / 12);
  const month = ((m % 12) + 12) % 12;
  const last = lastDayOfMonth(year, month);
  return Date.UTC(year, month, monthEnd ? last : Math.min(from.getUTCDate(), last));
}

export function parseDateMs(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) throw new Error(`sample.from must be YYYY-MM-DD, got "${text}"`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
}

/**
 * The start of each period of a sample, ascending. Day steps keep to the sample's calendar. Unless the
 * sample is scheduled, the periods end at `nowMs` (see the module comment) and `from` only sets their
 * phase: the weekday of a weekly sample, the day of month (or month end) and month of the others.
 */
export function samplePeriods(sample: DatasetSample, nowMs: number): number[] {
  const fromMs = parseDateMs(sample.from);
  const count = sample.periods;
  const months = STEP_MONTHS[sample.step];
  if (months !== undefined) {
    const monthEnd = isMonthEnd(fromMs);
    const at = (p: number) => monthPeriodMs(fromMs, months, p, monthEnd);
    let last = count - 1;
    if (!sample.scheduled) {
      // A period dated on the 1st stands for the whole period: it is last once the next one has begun.
      const wholePeriod = !monthEnd && new Date(fromMs).getUTCDate() === 1;
      const done = (p: number) => (wholePeriod ? at(p + 1) : at(p)) <= nowMs;
      const from = new Date(fromMs);
      const now = new Date(nowMs);
      const elapsed =
        (now.getUTCFullYear() - from.getUTCFullYear()) * 12 + now.getUTCMonth() - from.getUTCMonth();
      last = Math.floor(elapsed / months) + 1;
      while (!done(last)) last--;
    }
    return Array.from({ length: count }, (_, k) => at(last - count + 1 + k));
  }
  if (sample.step === 'hour') {
    const last = sample.scheduled ? fromMs + (count - 1) * MS_HOUR : Math.floor(nowMs / MS_HOUR) * MS_HOUR;
    return Array.from({ length: count }, (_, k) => last - (count - 1 - k) * MS_HOUR);
  }
  const stride = sample.step === 'week' ? 7 : 1;
  const fromDay = fromMs / MS_DAY;
  const days: number[] = [];
  if (sample.scheduled) {
    for (let d = fromDay; days.length < count; d += stride)
      if (isCalendarDay(d, sample.calendar)) days.push(d);
  } else {
    const today = Math.floor(nowMs / MS_DAY);
    // A weekly sample keeps the weekday of `from`; its last row is that weekday's latest date.
    const start = stride === 7 ? today - ((weekday(today) - weekday(fromDay) + 7) % 7) : today;
    for (let d = start; days.length < count; d -= stride) if (isCalendarDay(d, sample.calendar)) days.push(d);
    days.reverse();
  }
  return days.map((d) => d * MS_DAY);
}
