/**
 * One dataset: what it holds and its fields, a read form (entities, dates, fields, sort, page size), the
 * price before the read (GET /api/v1/estimate), the four cost headers after, the rows as a table and a
 * chart (opening on the close or main value), and CSV. The parts are in ./dataset/.
 */
import { useState } from 'preact/hooks';
import { CostPanel } from '../components/cost-panel.tsx';
import { ProblemBox } from '../components/problem-box.tsx';
import { Link } from '../router.tsx';
import { DatasetChart } from './dataset/dataset-chart.tsx';
import { DatasetHeading } from './dataset/dataset-heading.tsx';
import { Provenance } from './dataset/provenance.tsx';
import { ReadForm } from './dataset/read-form.tsx';
import { emptyReadForm, type ReadForm as Form, type SetReadField } from './dataset/read-query.ts';
import { RowPager } from './dataset/row-pager.tsx';
import { RowsTable } from './dataset/rows-table.tsx';
import { useDataset, useEstimate } from './dataset/use-dataset.ts';
import { useReader } from './dataset/use-reader.ts';

export function DatasetPage({ dsKey }: { dsKey: string; search: string }) {
  const { ds, suggestions, loadError } = useDataset(dsKey);
  const [form, setForm] = useState<Form>(emptyReadForm);
  const { estimate, estimateError, priceNow } = useEstimate(ds, form);
  const reader = useReader(dsKey, ds, form, priceNow);

  if (loadError) return <ProblemBox error={loadError} />;
  if (!ds) return <p class="muted">Loading…</p>;
  const set: SetReadField = (k, v) => setForm({ ...form, [k]: v });
  const { page, busy } = reader;

  return (
    <>
      <p class="small">
        <Link href="/explorer">← Explorer</Link>
      </p>
      <DatasetHeading ds={ds} estimate={estimate} />

      <h2>Read</h2>
      <ReadForm
        ds={ds}
        form={form}
        set={set}
        suggestions={suggestions}
        estimate={estimate}
        estimateError={estimateError}
        invalid={reader.invalid}
        busy={busy}
        onRead={reader.readFirst}
      />

      {reader.readError !== null && <ProblemBox error={reader.readError} onRetry={reader.retry} />}

      {reader.cost && <CostPanel cost={reader.cost} label="Cost of this read" />}
      {page && (
        <>
          {page.meta.sample && <p class="notice">{page.meta.notice ?? 'Generated sample data.'}</p>}
          <Provenance meta={page.meta} />
          <DatasetChart ds={ds} page={page} />
          <h2>Rows</h2>
          <RowPager
            pageIndex={reader.pageIndex}
            count={page.meta.count}
            hasNext={Boolean(page.meta.next_cursor)}
            busy={busy}
            tokenCost={estimate?.token_cost ?? null}
            onPrevious={reader.previous}
            onNext={reader.next}
            onCsv={reader.downloadCsv}
          />
          {reader.csvCost && <CostPanel cost={reader.csvCost} label="Cost of the CSV download" />}
          <RowsTable dsKey={ds.key} page={page} />
        </>
      )}
    </>
  );
}
