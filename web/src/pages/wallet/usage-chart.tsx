/** Tokens burned per day by channel (Terminal, REST, MCP) over the last 30 days. */
import { useMemo } from 'preact/hooks';
import { Chart } from '../../components/chart.tsx';
import type { UsageSummary } from '../../types.ts';
import { toNumber } from './to-number.ts';

export interface UsageChartProps {
  usage: UsageSummary | null;
}

export function UsageChart({ usage }: UsageChartProps) {
  const byChannel = useMemo(() => {
    if (!usage) return null;
    const xs = usage.days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const channels = ['terminal', 'rest', 'mcp'] as const;
    return {
      xs,
      series: channels.map((c) => ({
        label: c === 'rest' ? 'REST' : c === 'mcp' ? 'MCP' : 'Terminal',
        values: usage.days.map((d) => toNumber(d.tokens_burned[c])),
      })),
    };
  }, [usage]);
  return (
    <>
      <h2>Tokens per day by channel, last 30 days</h2>
      {usage?.partial && <p class="notice">Too many reads to sum: the oldest days are incomplete.</p>}
      {byChannel && (
        <Chart label="Tokens burned per day by channel" {...byChannel} bars={false} height={220} />
      )}
    </>
  );
}
