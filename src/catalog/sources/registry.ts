/** Every source a collector can run, by id (docs/collectors.md). */
import { bls } from './bls.ts';
import { cftc } from './cftc.ts';
import { ecb } from './ecb.ts';
import { eia } from './eia.ts';
import { eurostat } from './eurostat.ts';
import { fedH15 } from './fed-h15.ts';
import { fred } from './fred.ts';
import { nyfed } from './nyfed.ts';
import { secOwnership } from './ownership.ts';
import { secCurrent } from './sec-current.ts';
import { secFrames } from './sec-frames.ts';
import { secIndex } from './sec-index.ts';
import type { Source } from './source.ts';
import { treasuryDebt } from './treasury.ts';
import { usgs } from './usgs.ts';
import { worldbank } from './worldbank.ts';

export const sources: readonly Source[] = [
  secCurrent,
  secFrames,
  secIndex,
  secOwnership,
  nyfed,
  treasuryDebt,
  fred,
  fedH15,
  ecb,
  cftc,
  bls,
  eia,
  eurostat,
  worldbank,
  usgs,
];

export function sourceById(id: string): Source | undefined {
  return sources.find((s) => s.id === id);
}
