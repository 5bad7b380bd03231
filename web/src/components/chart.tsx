/** A chart that loads uPlot on first use, so pages without charts never download it. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Series } from '../chart/series.ts';

export function Chart(props: {
  label: string;
  xs: number[];
  series: Series[];
  bars?: boolean;
  height?: number;
}) {
  const el = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let handle: { destroy(): void } | null = null;
    let cancelled = false;
    import('../chart/line-chart.ts')
      .then(({ drawChart }) => {
        if (cancelled || !el.current) return;
        el.current.replaceChildren();
        handle = drawChart(el.current, props.xs, props.series, {
          ...(props.bars ? { bars: true } : {}),
          ...(props.height ? { height: props.height } : {}),
        });
        el.current.dataset.drawn = 'true';
      })
      .catch((e: unknown) => setFailed(e instanceof Error ? e.message : String(e)));
    return () => {
      cancelled = true;
      handle?.destroy();
    };
  }, [props.xs, props.series, props.bars, props.height]);
  return (
    <figure class="chart" aria-label={props.label}>
      <div ref={el} role="img" aria-label={`${props.label}: ${props.series.length} series`} />
      {failed && <p class="problem">The chart could not load: {failed}</p>}
    </figure>
  );
}
