/**
 * Central-bank meeting dates: one CSV row a day with 0/1 indicator columns (meeting, non-scheduled
 * meeting, projection materials, minutes). config/import-maps/fed-meeting-dates.json says which
 * indicator makes which event and at what local time the file's dates are placed.
 */
import meetingMap from '../../../config/import-maps/fed-meeting-dates.json' with { type: 'json' };
import { ImportError, normalizeColumnName } from '../import-file.ts';
import { cellCountProblem, csvTable } from './csv-table.ts';
import type { Importer, SourceRecord } from './importer.ts';

const indicator = (cell: string | undefined): boolean | string => {
  const text = (cell ?? '').trim();
  return text === '1' ? true : text === '0' || text === '' ? false : text;
};

/** The UTC instant of a local wall-clock time on a date in an IANA zone (the zone's offset that day). */
export function zonedInstant(date: string, time: string, timeZone: string): string | null {
  const guess = Date.parse(`${date}T${time}:00Z`);
  if (Number.isNaN(guess)) return null;
  const offsetOf = (ms: number) => {
    const name = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
      .formatToParts(ms)
      .find((p) => p.type === 'timeZoneName')?.value;
    const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name ?? '');
    return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000 : 0;
  };
  const ms = guess - offsetOf(guess - offsetOf(guess));
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function* records(text: string): Generator<SourceRecord> {
  const table = csvTable(text);
  const at = (column: string) => table.index.get(normalizeColumnName(column));
  const needed = [meetingMap.date_column, ...meetingMap.events.map((e) => e.indicator)];
  const absent = needed.filter((column) => at(column) === undefined);
  if (absent.length > 0)
    throw new ImportError(
      'The file lacks columns this format has.',
      absent.map((column) => `line 1: the header has no column "${column}"`),
    );
  const dateAt = at(meetingMap.date_column) as number;
  for (const { line, cells } of table.rows) {
    const bad = cellCountProblem(line, cells, table.header.length);
    if (bad) {
      yield bad;
      continue;
    }
    const date = (cells[dateAt] ?? '').trim();
    const flags: Record<string, boolean | string> = {};
    for (const [field, column] of Object.entries(meetingMap.flags)) {
      const index = at(column);
      flags[field] = index === undefined ? false : indicator(cells[index]);
    }
    for (const event of meetingMap.events) {
      const set = indicator(cells[at(event.indicator) as number]);
      if (set === false) continue;
      const where = `line ${line}, column ${event.indicator}`;
      if (set !== true) {
        yield { where, values: {}, problem: `"${set}" is not an indicator (0 or 1)` };
        continue;
      }
      const datetime = /^\d{4}-\d{2}-\d{2}$/.test(date)
        ? zonedInstant(date, meetingMap.local_time, meetingMap.time_zone)
        : date;
      yield {
        where,
        values: {
          event_id: `${event.id_prefix}-${date}`,
          datetime,
          event_type: event.event_type,
          agency: meetingMap.agency,
          importance: event.importance,
          is_fomc_meeting: event.is_fomc_meeting,
          is_minutes_release: event.is_minutes_release,
          // Non-scheduled meetings and projections belong to the meeting, not to its minutes.
          is_non_scheduled: event.is_fomc_meeting ? flags.is_non_scheduled : false,
          has_projection_materials: event.is_fomc_meeting ? flags.has_projection_materials : false,
        },
      };
    }
  }
}

export const fedMeetingDates: Importer = {
  name: 'fed-meeting-dates',
  title: 'Central-bank meeting dates CSV (date and 0/1 indicator columns)',
  source: 'Board of Governors of the Federal Reserve System (FOMC calendars), compiled by Weiland & Yeo',
  licence: 'Public records of the Federal Reserve; compilation used with credit',
  attribution: 'FOMC meeting dates compiled by Weiland & Yeo (2024) from Federal Reserve records',
  targets: [{ dataset: 'calendar/fed-events', naturalKey: ['event_id'] }],
  detect: (head) => /^\uFEFF?date,.*meeting.*indicator/i.test(head.split(/\r?\n/, 1)[0] ?? ''),
  records,
};
