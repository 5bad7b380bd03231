/**
 * One dataset: what it holds and its fields, a read form (entities, dates, fields, sort, page size), the
 * price before the read (GET /api/v1/estimate), the four cost headers after, the rows as a table and a
 * chart (opening on the close or main value), and CSV.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, api, apiText, type CostHeaders } from '../api.ts';
import { defaultChartField } from '../chart/default-field.ts';
import { seriesOf } from '../chart/series.ts';
import { Chart } from '../components/chart.tsx';
import { CostPanel } from '../components/cost-panel.tsx';
import { Coverage } from '../components/coverage.tsx';
import { ProblemBox } from '../components/problem-box.tsx';
import { ScrollRegion } from '../components/scroll-region.tsx';
import { Link } from '../router.tsx';
import { refreshMe } from '../session.ts';
import type { Dataset, Estimate, ReadPage } from '../types.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

interface Form {
  entities: string;
  from: string;
  to: string;
  fields: string[];
  sort: 'asc' | 'desc';
  limit: string;
  readAs: 'session' | 'key';
  key: string;
}

function invalidInput(form: Form): string | null {
  if (!/^\d{1,4}$/.test(form.limit) || Number(form.limit) < 1 || Number(form.limit) > 1000) {
    return 'Rows per page must be a whole number from 1 to 1000.';
  }
  if (form.from && !DATE.test(form.from)) return 'From must be a date (YYYY-MM-DD).';
  if (form.to && !DATE.test(form.to)) return 'To must be a date (YYYY-MM-DD).';
  if (form.from && form.to && form.from > form.to) return 'From must not be after To.';
  if (form.entities.length > 2000) return 'The entity filter is too long.';
  if (form.readAs === 'key' && !/^\S{8,}$/.test(form.key.trim())) return 'Paste the API key to read with.';
  return null;
}

function queryOf(ds: Dataset, form: Form, cursor: string | null): string {
  const q = new URLSearchParams();
  const entityField = ds.entity_fields[0];
  const entities = form.entities
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entityField && entities.length > 0) q.set(entityField, entities.join(','));
  if (form.from) q.set('from', form.from);
  if (form.to) q.set('to', form.to);
  if (form.fields.length > 0 && form.fields.length < ds.fields.length) q.set('fields', form.fields.join(','));
  q.set('sort', form.sort);
  q.set('limit', form.limit);
  if (cursor) q.set('cursor', cursor);
  return q.toString();
}

export function DatasetPage({ dsKey }: { dsKey: string; search: string }) {
  const [ds, setDs] = useState<Dataset | null>(null);
  const [suggestions, setSuggestions] = useState<string[]>([]);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [form, setForm] = useState<Form>({
    entities: '',
    from: '',
    to: '',
    fields: [],
    sort: 'desc',
    limit: '100',
    readAs: 'session',
    key: '',
  });
  const [estimate, setEstimate] = useState<Estimate | null>(null);
  const [estimateError, setEstimateError] = useState<unknown>(null);
  const [invalid, setInvalid] = useState<string | null>(null);
  const [page, setPage] = useState<ReadPage | null>(null);
  const [cost, setCost] = useState<CostHeaders | null>(null);
  const [readError, setReadError] = useState<unknown>(null);
  /** The cursor of each page read so far (null: the first), for paging back and forth. */
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [pageIndex, setPageIndex] = useState(0);
  const [busy, setBusy] = useState(false);
  const [csvCost, setCsvCost] = useState<CostHeaders | null>(null);
  const [chartField, setChartField] = useState('');

  useEffect(() => {
    const [domain, name] = dsKey.split('/') as [string, string];
    const path = `/api/v1/catalog/${encodeURIComponent(domain)}/${encodeURIComponent(name)}`;
    setDs(null);
    setPage(null);
    setCost(null);
    Promise.all([api<Dataset>(path), api<{ entities: Record<string, string[]> }>(`${path}/entities`)])
      .then(([d, e]) => {
        setDs(d.body);
        setSuggestions(e.body.entities[d.body.entity_fields[0] ?? ''] ?? []);
        setChartField(defaultChartField(d.body.fields));
      })
      .catch(setLoadError);
  }, [dsKey]);

  const keyOption = form.readAs === 'key' ? { key: form.key.trim() } : {};

  // The price before the read, for this credential now; without the estimate route, no price is shown.
  const priceNow = async () => {
    if (!ds) return;
    if (form.readAs === 'key' && !form.key.trim()) return setEstimate(null);
    try {
      const { body } = await api<Estimate>(
        `/api/v1/estimate?dataset=${encodeURIComponent(ds.key)}`,
        keyOption,
      );
      setEstimate(body);
      setEstimateError(null);
    } catch (e) {
      setEstimate(null);
      setEstimateError(e instanceof ApiError && e.status === 404 && e.code === 'not_found' ? null : e);
    }
  };
  useEffect(() => {
    priceNow();
  }, [ds, form.readAs, form.key]);

  const read = async (cursor: string | null, pageIndex: number) => {
    if (!ds) return;
    const problem = invalidInput(form);
    setInvalid(problem);
    if (problem) return;
    setBusy(true);
    setReadError(null);
    try {
      const answer = await api<ReadPage>(`/api/v1/data/${ds.key}?${queryOf(ds, form, cursor)}`, keyOption);
      setPage(answer.body);
      setCost(answer.cost);
      setCsvCost(null);
      const next = cursors.slice(0, pageIndex + 1);
      next[pageIndex + 1] = answer.body.meta.next_cursor;
      setCursors(next);
      setPageIndex(pageIndex);
    } catch (e) {
      setReadError(e);
    } finally {
      setBusy(false);
      if (form.readAs === 'session') refreshMe().catch(() => undefined);
      priceNow();
    }
  };

  const downloadCsv = async () => {
    if (!ds || !page) return;
    setBusy(true);
    setReadError(null);
    try {
      const answer = await apiText(
        `/api/v1/data/${ds.key}?${queryOf(ds, form, cursors[pageIndex] ?? null)}`,
        {
          ...keyOption,
          accept: 'text/csv',
        },
      );
      setCsvCost(answer.cost);
      const url = URL.createObjectURL(new Blob([answer.body], { type: 'text/csv' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `${ds.key.replace('/', '_')}.csv`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setReadError(e);
    } finally {
      setBusy(false);
      if (form.readAs === 'session') refreshMe().catch(() => undefined);
      priceNow();
    }
  };

  const chart = useMemo(() => {
    if (!ds || !page || !chartField) return null;
    return seriesOf(page.data, ds.time_field, ds.entity_fields, [chartField]);
  }, [ds, page, chartField]);

  if (loadError) return <ProblemBox error={loadError} />;
  if (!ds) return <p class="muted">Loading…</p>;
  const numericFields = ds.fields.filter((f) => f.type === 'number' || f.type === 'integer');
  const set = <K extends keyof Form>(k: K, v: Form[K]) => setForm({ ...form, [k]: v });
  const columns = page?.meta.fields ?? [];

  return (
    <>
      <p class="small">
        <Link href="/explorer">← Explorer</Link>
      </p>
      <h1>
        {ds.title} <code class="muted small">{ds.key}</code>{' '}
        {estimate && Number(estimate.tokens_burned) === 0 ? (
          <span class="badge p0">free for you</span>
        ) : ds.p0 ? (
          <span class="badge" title="Free for public-test keys; a wallet pays the price shown">
            open data (P0)
          </span>
        ) : (
          <span class="badge">paid</span>
        )}
      </h1>
      <p>{ds.description}</p>
      <p class="muted small">
        Source: {ds.source} · {ds.frequency} · list price {ds.list_cost} tokens per read
        {ds.aliases.length > 0 && ` · also as ${ds.aliases.join(', ')}`}
      </p>
      <Coverage ds={ds} />

      <details>
        <summary>Fields ({ds.fields.length})</summary>
        <table>
          <caption class="visually-hidden">Fields of {ds.key}</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Type</th>
              <th scope="col">Unit</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {ds.fields.map((f) => (
              <tr key={f.name}>
                <td>
                  <code>{f.name}</code>
                </td>
                <td>{f.type}</td>
                <td>{f.unit ?? ''}</td>
                <td>{f.description}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>

      <h2>Read</h2>
      <form
        class="card"
        aria-label="Read parameters"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setCursors([null]);
          read(null, 0);
        }}
      >
        <div class="row">
          {ds.entity_fields[0] && (
            <label>
              {ds.entity_fields[0]} (comma-separated)
              <input
                list="entity-suggestions"
                value={form.entities}
                maxLength={2000}
                onInput={(e) => set('entities', e.currentTarget.value)}
              />
              <datalist id="entity-suggestions">
                {suggestions.map((s) => (
                  <option key={s} value={s} />
                ))}
              </datalist>
            </label>
          )}
          <label>
            From
            <input type="date" value={form.from} onInput={(e) => set('from', e.currentTarget.value)} />
          </label>
          <label>
            To
            <input type="date" value={form.to} onInput={(e) => set('to', e.currentTarget.value)} />
          </label>
          <label>
            Sort
            <select value={form.sort} onChange={(e) => set('sort', e.currentTarget.value as 'asc' | 'desc')}>
              <option value="desc">Newest first</option>
              <option value="asc">Oldest first</option>
            </select>
          </label>
          <label>
            Rows per page
            <input
              inputMode="numeric"
              size={5}
              value={form.limit}
              onInput={(e) => set('limit', e.currentTarget.value.trim())}
            />
          </label>
        </div>
        {suggestions.length > 0 && (
          <p class="muted small">Suggested: {suggestions.slice(0, 12).join(', ')}</p>
        )}
        <fieldset>
          <legend>Fields to read (none ticked: all)</legend>
          <div class="row">
            {ds.fields.map((f) => (
              <label class="inline" key={f.name}>
                <input
                  type="checkbox"
                  checked={form.fields.includes(f.name)}
                  onChange={(e) =>
                    set(
                      'fields',
                      e.currentTarget.checked
                        ? [...form.fields, f.name]
                        : form.fields.filter((x) => x !== f.name),
                    )
                  }
                />
                {f.name}
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>Read as</legend>
          <div class="row">
            <label class="inline">
              <input
                type="radio"
                name="read-as"
                checked={form.readAs === 'session'}
                onChange={() => set('readAs', 'session')}
              />
              This Terminal session (Terminal price)
            </label>
            <label class="inline">
              <input
                type="radio"
                name="read-as"
                checked={form.readAs === 'key'}
                onChange={() => set('readAs', 'key')}
              />
              An API key (API price)
            </label>
            {form.readAs === 'key' && (
              <label>
                API key (kept in this page only)
                <input
                  type="password"
                  autocomplete="off"
                  value={form.key}
                  onInput={(e) => set('key', e.currentTarget.value)}
                />
              </label>
            )}
          </div>
        </fieldset>

        <section aria-label="Price before reading" class="row">
          {estimate ? (
            <p data-testid="price-before">
              This read costs <strong data-testid="estimate-cost">{estimate.token_cost}</strong> tokens
              {estimate.tokens_burned !== estimate.token_cost && (
                <> (burns {estimate.tokens_burned}: public-test reads of free data burn nothing)</>
              )}{' '}
              ({estimate.cost_eur} EUR); balance {estimate.balance} → {estimate.balance_after}.
              {estimate.would_refuse && (
                <strong class="badge no"> would be refused: {estimate.would_refuse}</strong>
              )}
              {estimate.would_refuse === 'insufficient_tokens' && (
                <>
                  {' '}
                  <a href="/terminal/wallet#buy" data-testid="buy-link">
                    Buy tokens
                  </a>{' '}
                  to read it.
                </>
              )}
            </p>
          ) : (
            <p class="muted">No price available before reading.</p>
          )}
          {estimateError !== null && (
            <p class="muted">
              No price now:{' '}
              {estimateError instanceof ApiError
                ? `${estimateError.status} ${estimateError.problem.title}`
                : String(estimateError)}
            </p>
          )}
        </section>
        {invalid && (
          <p class="problem" role="alert">
            {invalid}
          </p>
        )}
        {/* A read the price says would be refused is not offered: the reason and the way out are above. */}
        <button type="submit" disabled={busy || Boolean(estimate?.would_refuse)}>
          {estimate ? `Read (${estimate.token_cost} tokens)` : 'Read'}
        </button>
      </form>

      {readError !== null && (
        <ProblemBox error={readError} onRetry={() => read(cursors[pageIndex] ?? null, pageIndex)} />
      )}

      {cost && <CostPanel cost={cost} label="Cost of this read" />}
      {page && (
        <>
          {page.meta.sample && <p class="notice">{page.meta.notice ?? 'Generated sample data.'}</p>}
          <Provenance meta={page.meta} />
          <h2>Chart</h2>
          {numericFields.length > 0 ? (
            <>
              <label>
                Field to chart
                <select value={chartField} onChange={(e) => setChartField(e.currentTarget.value)}>
                  {numericFields.map((f) => (
                    <option key={f.name} value={f.name}>
                      {f.name}
                      {f.unit ? ` (${f.unit})` : ''}
                    </option>
                  ))}
                </select>
              </label>
              {chart && chart.series.length > 0 ? (
                <Chart label={`${chartField} over ${ds.time_field}, one line per entity`} {...chart} />
              ) : (
                <p class="muted">Nothing numeric to chart in this page (read the field to chart it).</p>
              )}
            </>
          ) : (
            <p class="muted">This dataset has no numeric field to chart.</p>
          )}
          <h2>Rows</h2>
          <div class="row">
            <span>
              Page {pageIndex + 1}, {page.meta.count} rows
            </span>
            <button
              type="button"
              class="secondary"
              disabled={busy || pageIndex === 0}
              onClick={() => read(cursors[pageIndex - 1] ?? null, pageIndex - 1)}
            >
              Previous page (one more read)
            </button>
            <button
              type="button"
              class="secondary"
              disabled={busy || !page.meta.next_cursor}
              onClick={() => read(page.meta.next_cursor, pageIndex + 1)}
            >
              Next page (one more read)
            </button>
            <button type="button" class="secondary" disabled={busy} onClick={downloadCsv}>
              Download CSV (one more metered read{estimate ? `: ${estimate.token_cost} tokens` : ''})
            </button>
          </div>
          {csvCost && <CostPanel cost={csvCost} label="Cost of the CSV download" />}
          <ScrollRegion label="Rows (scrollable)">
            <table>
              <caption class="visually-hidden">Rows read from {ds.key}</caption>
              <thead>
                <tr>
                  {columns.map((c) => (
                    <th scope="col" key={c}>
                      {c}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {page.data.map((row, i) => (
                  <tr key={i}>
                    {columns.map((c) => (
                      <td key={c} class={typeof row[c] === 'number' ? 'num' : undefined}>
                        {row[c] === null || row[c] === undefined ? '' : String(row[c])}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        </>
      )}
    </>
  );
}

/** Where the page's rows came from and how fresh the dataset is, with the credit a licence asks for. */
function Provenance({ meta }: { meta: ReadPage['meta'] }) {
  const source = meta.source;
  if (!source || source.kind === 'sample') return null;
  const asOf = meta.as_of ? ` Newest observation: ${meta.as_of}.` : '';
  if (source.kind === 'records') {
    return <p class="provenance">From the service's own records.{asOf}</p>;
  }
  return (
    <div class="provenance">
      <p>Imported from published files.{asOf}</p>
      <ul class="provenance-list">
        {source.imports.map((run) => (
          <li key={`${run.file}-${run.imported_at}`}>
            {run.publisher}: {run.file}, imported {run.imported_at.slice(0, 10)}; licence {run.licence}
            {run.attribution ? `. ${run.attribution}` : ''}
          </li>
        ))}
      </ul>
    </div>
  );
}
