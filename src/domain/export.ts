/**
 * Bulk export (spec 2.3 `bulk_export`): a whole dataset in one response, for accounts whose package has
 * it. Priced per started 1,000 rows at the dataset's list cost, discounted and surcharged like any read,
 * and charged once through the one metered path before the first byte is sent.
 */

import type { CatalogEntry } from '../catalog/catalog.ts';
import type { ServiceFile } from '../config.ts';
import { AppError } from '../errors.ts';
import type { Datasets, RowSource, StoredRow } from '../store/port.ts';
import type { Caller } from './caller.ts';
import { credentialKinds, kindLabel } from './credential-kinds.ts';
import { type MeterDeps, type Metered, meter } from './metering.ts';
import { entitlementsOf, exportPackages } from './packages.ts';
import type { DataReads } from './reads.ts';
import { chargeOf, refund } from './refunds.ts';
import { recordDatasets } from './system-datasets.ts';

export const EXPORT_ROWS_PER_UNIT = 1000;
const PAGE_ROWS = 1000;

export interface ExportPlan {
  entry: CatalogEntry;
  /** Rows in the dataset when the export started: what the charge is for. */
  rows: number;
  /** Started blocks of 1,000 rows (at least 1). */
  units: number;
  source: RowSource;
  /** When it was charged: a refund lowers that month's burn. */
  chargedAt: number;
}

/** ceil(rows / 1000), at least 1: an export of an empty dataset is still one read. */
export function exportUnits(rows: number): number {
  return Math.max(1, Math.ceil(rows / EXPORT_ROWS_PER_UNIT));
}

export interface ExportDeps {
  config: ServiceFile;
  reads: DataReads;
  /** The metered path's ledger and clock: the charge and its refund. */
  meter: MeterDeps;
  /** The rows streamed. */
  datasets: Datasets;
}

export class DataExports {
  readonly #deps: ExportDeps;

  constructor(deps: ExportDeps) {
    this.#deps = deps;
  }

  assertEntitled(caller: Caller): void {
    const names = exportPackages(this.#deps.config)
      .map((s) => s.name)
      .join(', ');
    const ids = exportPackages(this.#deps.config).map((s) => s.id);
    if (!credentialKinds[caller.kind].mayExport) {
      const who = kindLabel(caller.kind);
      throw new AppError(
        'forbidden',
        `Bulk export is not available with ${who}; it comes with the ${names} packages, on a wallet-backed key or session.`,
        { packages: ids },
      );
    }
    if (!entitlementsOf(this.#deps.config, caller.account).bulk_export) {
      throw new AppError(
        'forbidden',
        `Bulk export comes with the ${names} packages; this account's package does not include it. Packages are assigned by an operator (checkout is not live).`,
        { packages: ids },
      );
    }
  }

  /**
   * Checks entitlement, counts the rows and charges the export once. Nothing is streamed yet. The count
   * is taken when the export starts; an import racing with it changes what is streamed, not the price.
   */
  async start(caller: Caller, requestId: string, key: string): Promise<Metered<ExportPlan>> {
    this.assertEntitled(caller);
    const { reads, meter: meterDeps } = this.#deps;
    const entry = reads.resolve(key);
    if (recordDatasets.has(entry.dataset.key)) {
      // Made per read from the service's records (the caller's usage, the import runs): there are no
      // stored rows to stream, and the sample rows a stream would find are not the caller's records.
      throw new AppError(
        'invalid_request',
        `${entry.key} is made from the service's own records for each read, so it has no bulk export: read it page by page with GET /api/v1/data/${entry.key}.`,
        { dataset: entry.key },
      );
    }
    const source = await reads.ensureRows(entry);
    const rows = (await this.#deps.datasets.datasetSource(entry.dataset.key))?.rows ?? 0;
    const units = exportUnits(rows);
    const chargedAt = meterDeps.now();
    return meter(
      meterDeps,
      caller,
      requestId,
      `export:${entry.key}`,
      [{ label: entry.key, listCost: units * entry.listCost, p0: entry.p0 }],
      async () => ({ value: { entry, rows, units, source, chargedAt }, rows }),
      { grandfather: false },
    );
  }

  /**
   * Gives the tokens back when the stream fails on our side after the charge: a read is charged only
   * when it is served. A client that hangs up mid-stream was served; nothing is refunded then. The
   * refund is dated with the charge it reverses: one made after midnight gives back the day (and
   * month) the export was charged in, not the next.
   */
  async refund(
    caller: Caller,
    started: Metered<ExportPlan>,
    requestId: string,
    detail: string,
  ): Promise<void> {
    const { entry, units, chargedAt } = started.value;
    const label = `export:${entry.key}`;
    const charged = chargeOf(requestId, label, units * entry.listCost, started.cost, chargedAt);
    await refund(this.#deps.meter, caller, charged, detail);
  }

  /**
   * The dataset's rows oldest first, a page at a time (keyset paging: no offset scans); with `csv`, each
   * row comes with its stored CSV line where there is one (`storedCsvLines`).
   */
  async *pages(entry: CatalogEntry, options: { csv?: boolean } = {}): AsyncGenerator<StoredRow[]> {
    const store = this.#deps.datasets;
    let after: { t: string; id: number } | undefined;
    for (;;) {
      const { rows: page } = await store.queryRows({
        dataset: entry.dataset.key,
        filters: {},
        descending: false,
        limit: PAGE_ROWS,
        ...(after ? { after } : {}),
        ...(options.csv ? { csvColumns: entry.csvColumns } : {}),
      });
      if (page.length > 0) yield page;
      const last = page.at(-1);
      if (!last || page.length < PAGE_ROWS) return;
      after = { t: last.t, id: last.id };
    }
  }
}
