/**
 * Axis labels that fit: 1.2M, 350k, 12.5, 0.034. uPlot's default prints every digit, which a narrow axis
 * cuts to "0,000" for volumes and positions.
 */
const units = [
  { at: 1e12, suffix: 'T' },
  { at: 1e9, suffix: 'B' },
  { at: 1e6, suffix: 'M' },
  { at: 1e3, suffix: 'k' },
];

/** At most three significant digits, trailing zeros dropped; `step` (the tick spacing) keeps neighbours apart. */
export function compactNumber(value: number, step = 0): string {
  if (!Number.isFinite(value)) return '';
  if (value === 0) return '0';
  const abs = Math.abs(value);
  for (const { at, suffix } of units) {
    if (abs >= at) {
      // Enough decimals that two ticks `step` apart never print the same label.
      const decimals =
        step > 0 && step < at ? Math.min(3, Math.max(0, Math.ceil(-Math.log10(step / at)))) : 0;
      const scaled = value / at;
      const digits = Math.max(
        decimals,
        scaled >= 100 || scaled <= -100 ? 0 : scaled >= 10 || scaled <= -10 ? 1 : 2,
      );
      return `${trim(scaled.toFixed(Math.min(digits, 3)))}${suffix}`;
    }
  }
  const decimals = abs >= 100 ? 0 : abs >= 1 ? 2 : Math.min(6, 2 - Math.floor(Math.log10(abs)));
  const stepDecimals = step > 0 && step < 1 ? Math.min(6, Math.ceil(-Math.log10(step))) : 0;
  return trim(value.toFixed(Math.max(decimals, stepDecimals)));
}

function trim(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
