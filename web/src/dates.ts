/** An instant from the API as the Terminal shows it: `2026-12-28 15:00:00 UTC` (the Keys page's form). */
export const utcTime = (iso: string | null): string =>
  iso ? iso.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC') : '—';
