/**
 * Every dataset's price for one caller, on each face: what a read costs from the Terminal (tier
 * discount, then the surcharge) and with an API key (tier discount only), and whether the caller may
 * read it. The same arithmetic as the debit (priceRead), so a price shown is the price charged.
 */
import type { Catalog, CatalogEntry } from '../catalog/catalog.ts';
import type { Tier } from '../config.ts';
import type { Datasets, RowSource } from '../store/port.ts';
import type { Caller } from './caller.ts';
import { isFreeCredential } from './caller.ts';
import { type MeterDeps, tierOf } from './metering.ts';
import { priceRead } from './pricing.ts';

export interface PriceLine {
  entry: CatalogEntry;
  terminalMicros: bigint;
  apiKeyMicros: bigint;
  /** Whether this caller may read it; a sandbox or public-test key reads P0 datasets only. */
  entitled: boolean;
  /** Where its rows come from; null: none yet (sample rows are generated on the first read). */
  source: RowSource | null;
}

export interface PriceListDeps extends MeterDeps {
  catalog: Catalog;
  datasets: Datasets;
}

export async function priceList(
  deps: PriceListDeps,
  caller: Caller,
): Promise<{ tier: Tier; lines: PriceLine[] }> {
  const wallet = (await deps.store.getWallet(caller.wallet.id)) ?? caller.wallet;
  const tier = tierOf(deps, { ...caller, wallet }, deps.now());
  const sources = new Map<string, RowSource | null>();
  const lines: PriceLine[] = [];
  for (const entry of deps.catalog.entries()) {
    const canonical = entry.dataset.key;
    if (!sources.has(canonical)) {
      sources.set(canonical, (await deps.datasets.datasetSource(canonical))?.source ?? null);
    }
    lines.push({
      entry,
      terminalMicros: priceRead(deps.pricing, entry.listCost, tier, 'terminal'),
      apiKeyMicros: priceRead(deps.pricing, entry.listCost, tier, 'rest'),
      entitled: !isFreeCredential(caller) || entry.p0,
      source: sources.get(canonical) ?? null,
    });
  }
  return { tier, lines };
}
