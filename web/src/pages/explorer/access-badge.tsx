/**
 * Access worded for the viewer: P0 means free for free keys (the public test), not for a wallet, so a
 * wallet account sees "open data (P0)" beside what it pays, and "free for you" only where it pays 0.
 */
import type { Line } from './catalog-lines.ts';

export interface AccessBadgeProps {
  line: Line;
}

export function AccessBadge({ line }: AccessBadgeProps) {
  if (line.price && Number(line.price.terminal_cost) === 0) return <span class="badge p0">free for you</span>;
  if (line.p0)
    return (
      <span class="badge" title="Free for public-test keys; a wallet pays the price shown">
        open data (P0)
      </span>
    );
  return <span class="badge">paid</span>;
}
