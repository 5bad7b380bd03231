/** A scrolling box around a wide or long table, reachable from the keyboard so it can be scrolled. */
import type { ComponentChildren } from 'preact';

export function ScrollRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard (WCAG 2.1.1)
    <section class="table-wrap" tabIndex={0} aria-label={label}>
      {children}
    </section>
  );
}
