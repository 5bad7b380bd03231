/** Exact decimal strings to a number only for drawing: charts and bars, never sums shown as money. */
export const toNumber = (s: string) => Number(s);
