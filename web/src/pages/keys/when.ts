/** An API instant as the Keys page shows it: "2026-11-20 12:00:00 UTC", or a dash for none. */
export const when = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '—');
