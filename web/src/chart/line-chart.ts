/**
 * Time-series charts with uPlot, loaded only by the pages that chart. Zoom by dragging across the plot
 * (double-click resets); the legend shows the values under the cursor.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

import { compactNumber } from './compact.ts';
import type { Series } from './series.ts';

const palette = ['--series-1', '--series-2', '--series-3', '--series-4', '--series-5', '--series-6'];

function colour(i: number): string {
  const name = palette[i % palette.length] as string;
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#4fa3ff';
}

const DAY = 86_400;
const MONTH = 30 * DAY;
const YEAR = 365 * DAY;
/** Tick spacings for daily data: whole days, months and years (uPlot's own also offer hours). */
const dayIncrs = [1, 2, 3, 7, 14]
  .map((n) => n * DAY)
  .concat(
    [1, 2, 3, 6].map((n) => n * MONTH),
    [1, 2, 5, 10].map((n) => n * YEAR),
  );

/** Dates are UTC days (2026-11-20 is that day's 00:00Z): drawn as such in every time zone. */
const utc = (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');

export interface ChartHandle {
  destroy(): void;
}

/** Draws lines over x (seconds since the epoch) into `el`, sized to its width. */
export function drawChart(
  el: HTMLElement,
  xs: number[],
  series: Series[],
  options: { title?: string; height?: number; bars?: boolean } = {},
): ChartHandle {
  const axisColour = getComputedStyle(document.documentElement).getPropertyValue('--text-dim').trim();
  const gridColour = getComputedStyle(document.documentElement).getPropertyValue('--line').trim();
  const axis = { stroke: axisColour, grid: { stroke: gridColour, width: 1 }, ticks: { stroke: gridColour } };
  const daily = xs.every((x) => x % DAY === 0);
  const plot = new uPlot(
    {
      ...(options.title ? { title: options.title } : {}),
      width: Math.max(320, el.clientWidth - 8),
      height: options.height ?? 320,
      tzDate: utc,
      scales: { x: { time: true } },
      axes: [
        daily ? { ...axis, incrs: dayIncrs } : axis,
        {
          ...axis,
          values: (_u: uPlot, splits: number[], _axis: number, _space: number, step: number) =>
            splits.map((v) => compactNumber(v, step)),
        },
      ],
      cursor: { drag: { x: true, y: false } },
      series: [
        { value: daily ? '{YYYY}-{MM}-{DD}' : '{YYYY}-{MM}-{DD} {HH}:{mm}Z' },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: colour(i),
          width: 1.5,
          spanGaps: true,
          ...(options.bars ? { paths: uPlot.paths.bars?.({ size: [0.8, 40] }), fill: colour(i) } : {}),
        })),
      ],
    },
    [xs, ...series.map((s) => s.values)],
    el,
  );
  return { destroy: () => plot.destroy() };
}
