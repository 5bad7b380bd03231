/**
 * Analyze: the Workbench's composer and assistant (docs/analyze.md). The composer saves an analysis
 * (series, steps, outputs), shows its estimate (every read at the user's Terminal price), runs it and
 * draws its outputs; the assistant turns a question into such an analysis. Accounts without the
 * Workbench package see what it is and which package brings it.
 */
import './analyze.css';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, parseJsonInput } from '../api.ts';
import { Chart } from '../components/chart.tsx';
import { ProblemBox } from '../components/problem-box.tsx';
import { ScrollRegion } from '../components/scroll-region.tsx';
import { Link } from '../router.tsx';
import { refreshMe } from '../session.ts';
import type {
  Analysis,
  AnalysisEstimate,
  AnalysisOutput,
  AnalysisResult,
  AnalysisSpec,
  AssistantAnswer,
  QuestionEstimate,
  SeriesSpec,
} from '../types.ts';

interface SeriesRow {
  id: string;
  dataset: string;
  entity: string;
  field: string;
  from: string;
  to: string;
}

const emptyRow = (n: number): SeriesRow => ({
  id: `s${n}`,
  dataset: 'stocks/prices',
  entity: '',
  field: 'close',
  from: '',
  to: '',
});

function rowsOf(spec: AnalysisSpec): SeriesRow[] {
  return spec.series.map((s) => ({
    id: s.id,
    dataset: s.dataset,
    entity: Object.entries(s.entity)
      .map(([k, v]) => `${k}=${v}`)
      .join(', '),
    field: s.field,
    from: s.from ?? '',
    to: s.to ?? '',
  }));
}

/** "symbol=AAPL, exchange=NASDAQ" -> {symbol: "AAPL", exchange: "NASDAQ"}. */
function entityOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

function specOf(rows: SeriesRow[], stepsText: string, outputsText: string): AnalysisSpec {
  const series: SeriesSpec[] = rows.map((r) => ({
    id: r.id.trim(),
    dataset: r.dataset.trim(),
    entity: entityOf(r.entity),
    field: r.field.trim(),
    // "AAPL close": how charts and tables name it.
    label: [...Object.values(entityOf(r.entity)), r.field.trim()].join(' ').slice(0, 80),
    ...(r.from.trim() && { from: r.from.trim() }),
    ...(r.to.trim() && { to: r.to.trim() }),
  }));
  const ids = series.map((s) => s.id);
  // Parsed here: a typo is reported with where it is, and nothing is sent.
  const steps = stepsText.trim() ? (parseJsonInput('Steps', stepsText) as AnalysisSpec['steps']) : [];
  const outputs: AnalysisSpec['outputs'] = outputsText.trim()
    ? (parseJsonInput('Outputs', outputsText) as AnalysisSpec['outputs'])
    : [
        { kind: 'line', values: ids },
        { kind: 'stats', values: ids },
      ];
  return { series, steps, outputs };
}

/** What the Workbench is, for an account whose package does not bring it. */
function NotEntitled({ error }: { error: ApiError }) {
  const packages = Array.isArray(error.problem.packages)
    ? (error.problem.packages as string[])
    : ['workbench'];
  return (
    <section class="notice" aria-labelledby="not-entitled">
      <h2 id="not-entitled">The Workbench is not part of your package</h2>
      <p>
        Analyze holds the Workbench's <strong>analysis composer</strong> (build an analysis from datasets and
        transforms: returns, spreads, rolling statistics, correlations, COT net positions, the Treasury curve;
        see charts and tables) and its <strong>assistant</strong> (ask a question in plain English and get
        that analysis). Every read they make is an ordinary metered read at your Terminal price, within a
        daily fair use.
      </p>
      <p>
        It comes with the{' '}
        <strong>{packages.map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join(' or ')}</strong> package,
        which an operator assigns; it is not part of the free public test.
      </p>
      <p>{error.problem.detail}</p>
      <p>
        <Link href="/packages">Compare the packages</Link>
      </p>
    </section>
  );
}

function OutputView({ output, index }: { output: AnalysisOutput; index: number }) {
  if ((output.kind === 'line' || output.kind === 'bar') && output.x === 'date') {
    const dates = [...new Set(output.series.flatMap((s) => s.x))].sort();
    const xs = dates.map((d) => Date.parse(d.length === 10 ? `${d}T00:00:00Z` : d) / 1000);
    const series = output.series.map((s) => {
      const byDate = new Map(s.x.map((d, i) => [d, s.y[i] ?? null]));
      return { label: s.name, values: dates.map((d) => byDate.get(d) ?? null) };
    });
    return (
      <section class="card" aria-label={`Output ${index + 1}: ${output.title}`}>
        <h3>{output.title}</h3>
        <Chart label={`Chart: ${output.title}`} xs={xs} series={series} bars={output.kind === 'bar'} />
      </section>
    );
  }
  const table =
    output.kind === 'table'
      ? { columns: output.columns, rows: output.rows }
      : output.kind === 'stats'
        ? {
            columns: ['series', 'count', 'first date', 'last date', 'mean', 'std', 'min', 'max', 'last'],
            rows: output.rows.map((r) => [
              r.name,
              r.count,
              r.first_date,
              r.last_date,
              r.mean,
              r.std,
              r.min,
              r.max,
              r.last,
            ]),
          }
        : {
            columns: ['', ...output.series.map((s) => s.name)],
            rows: (output.series[0]?.x ?? []).map((label, i) => [
              label,
              ...output.series.map((s) => s.y[i] ?? null),
            ]),
          };
  const fmt = (v: unknown) =>
    typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toPrecision(6)) : (v ?? '—');
  return (
    <section class="card" aria-label={`Output ${index + 1}: ${output.title}`}>
      <h3>{output.title}</h3>
      <ScrollRegion label={`Table: ${output.title}`}>
        <table>
          <thead>
            <tr>
              {table.columns.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.rows.slice(-200).map((row, i) => (
              <tr key={i}>
                {row.map((cell, k) => (
                  <td key={k} class={typeof cell === 'number' ? 'num' : ''}>
                    {String(fmt(cell))}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </section>
  );
}

function ResultView({ result, analysisId }: { result: AnalysisResult; analysisId: string | null }) {
  return (
    <section aria-labelledby="result-title">
      <h2 id="result-title">Result</h2>
      <p role="status">
        {result.reused_from ? (
          <>
            Reused the result paid for at {result.reused_from.started_at} ({result.reused_from.tokens_burned}{' '}
            tokens then): nothing was read, <strong data-testid="run-burned">0</strong> tokens burned now.
          </>
        ) : (
          <>
            {result.reads.length} metered reads,{' '}
            <strong data-testid="run-burned">{result.tokens_burned}</strong> tokens burned ({result.cost_eur}{' '}
            EUR).
          </>
        )}{' '}
        {analysisId && (
          <a href={`/api/v1/analyses/${encodeURIComponent(analysisId)}/result.csv`} download>
            Download CSV
          </a>
        )}
      </p>
      {result.reads.some((r) => r.truncated) && (
        <p class="small muted">Some series had more than 1000 observations: the oldest were left out.</p>
      )}
      {result.problems.length > 0 && (
        <ul class="small" aria-label="Problems">
          {result.problems.map((p) => (
            <li key={p.path}>
              {p.path}: {p.message}
            </li>
          ))}
        </ul>
      )}
      {result.outputs.map((o, i) => (
        <OutputView key={i} output={o} index={i} />
      ))}
    </section>
  );
}

export function AnalyzePage() {
  const [entitlement, setEntitlement] = useState<'loading' | 'yes' | ApiError>('loading');
  const [planner, setPlanner] = useState('built-in');
  const [saved, setSaved] = useState<Analysis[]>([]);
  const [current, setCurrent] = useState<Analysis | null>(null);
  const [name, setName] = useState('');
  const [rows, setRows] = useState<SeriesRow[]>([emptyRow(1)]);
  const [stepsText, setStepsText] = useState('');
  const [outputsText, setOutputsText] = useState('');
  const [estimate, setEstimate] = useState<AnalysisEstimate | null>(null);
  const [confirmed, setConfirmed] = useState(false);
  const [result, setResult] = useState<AnalysisResult | null>(null);
  const [question, setQuestion] = useState('');
  const [answer, setAnswer] = useState<AssistantAnswer | null>(null);
  const [answerSaved, setAnswerSaved] = useState(false);
  const [questionEstimate, setQuestionEstimate] = useState<QuestionEstimate | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const load = async () => {
    try {
      const { body } = await api<{ data: Analysis[]; meta: { planner: string } }>('/api/v1/analyses');
      setSaved(body.data);
      setPlanner(body.meta.planner);
      setEntitlement('yes');
    } catch (e) {
      if (e instanceof ApiError && e.code === 'analysis_not_entitled') setEntitlement(e);
      else setError(e);
    }
  };
  useEffect(() => {
    load();
  }, []);

  // What the question would cost, planned by the service as the user types (free: nothing is read).
  useEffect(() => {
    setQuestionEstimate(null);
    if (entitlement !== 'yes' || !question.trim()) return;
    let current = true;
    const timer = setTimeout(async () => {
      try {
        const { body } = await api<QuestionEstimate>('/api/v1/assistant/estimate', {
          method: 'POST',
          body: { question },
        });
        if (current) setQuestionEstimate(body);
      } catch {
        // An estimate is a courtesy: Ask reports any refusal itself.
      }
    }, 400);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [question, entitlement]);

  /** Puts an analysis in the composer: a saved one, or an answer not saved yet (`current` null). */
  const open = (a: Analysis | { name: string; spec: AnalysisSpec }) => {
    setCurrent('id' in a ? a : null);
    setName(a.name);
    setRows(rowsOf(a.spec));
    setStepsText(a.spec.steps.length ? JSON.stringify(a.spec.steps, null, 1) : '');
    setOutputsText(JSON.stringify(a.spec.outputs, null, 1));
    setEstimate(null);
    setResult(null);
  };

  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  /** Saves the composer's analysis (a new one, or changes to the one open) and returns it. */
  const save = async (): Promise<Analysis> => {
    const spec = specOf(rows, stepsText, outputsText);
    const body = { name: name.trim() || 'Untitled analysis', spec };
    const { body: savedOne } = current
      ? await api<Analysis>(`/api/v1/analyses/${encodeURIComponent(current.id)}`, { method: 'PATCH', body })
      : await api<Analysis>('/api/v1/analyses', { method: 'POST', body });
    setCurrent(savedOne);
    setSaved((list) => [savedOne, ...list.filter((a) => a.id !== savedOne.id)]);
    return savedOne;
  };

  const doEstimate = () =>
    act(async () => {
      const a = await save();
      const { body } = await api<AnalysisEstimate>(`/api/v1/analyses/${encodeURIComponent(a.id)}/estimate`);
      setEstimate(body);
      setConfirmed(false);
    });

  const doRun = () =>
    act(async () => {
      const a = await save();
      const { body } = await api<AnalysisResult>(`/api/v1/analyses/${encodeURIComponent(a.id)}/run`, {
        method: 'POST',
        body: {},
      });
      setResult(body);
      await refreshMe();
    });

  const ask = (text: string) =>
    act(async () => {
      setAnswer(null);
      const { body } = await api<AssistantAnswer>('/api/v1/assistant/ask', {
        method: 'POST',
        body: { question: text },
      });
      setAnswer(body);
      setAnswerSaved(false);
      if (body.kind === 'analysis') {
        // Not saved until the user asks: it opens in the composer as a draft.
        open(body);
        setResult(body.result);
        await refreshMe();
      }
    });

  const saveAnswer = () =>
    act(async () => {
      await save();
      setAnswerSaved(true);
    });

  const remove = (a: Analysis) =>
    act(async () => {
      await api(`/api/v1/analyses/${encodeURIComponent(a.id)}`, { method: 'DELETE' });
      setSaved((list) => list.filter((x) => x.id !== a.id));
      if (current?.id === a.id) setCurrent(null);
    });

  const duplicate = (a: Analysis) =>
    act(async () => {
      const { body } = await api<Analysis>(`/api/v1/analyses/${encodeURIComponent(a.id)}/duplicate`, {
        method: 'POST',
        body: {},
      });
      setSaved((list) => [body, ...list]);
      open(body);
    });

  if (entitlement === 'loading') {
    return (
      <>
        <h1>Analyze</h1>
        {error ? <ProblemBox error={error} /> : <p class="muted">Loading…</p>}
      </>
    );
  }
  if (entitlement instanceof ApiError) {
    return (
      <>
        <h1>Analyze</h1>
        <NotEntitled error={entitlement} />
      </>
    );
  }

  const setRow = (i: number, patch: Partial<SeriesRow>) =>
    setRows((rs) => rs.map((r, k) => (k === i ? { ...r, ...patch } : r)));
  const needsConfirm = estimate?.confirm_required === true && !confirmed;

  return (
    <>
      <h1>Analyze</h1>
      <section class="card" aria-labelledby="assistant-title">
        <h2 id="assistant-title">Ask the assistant</h2>
        <form
          class="analyze-ask"
          onSubmit={(e) => {
            e.preventDefault();
            if (question.trim()) ask(question);
          }}
        >
          <label for="question">Question</label>
          <input
            id="question"
            value={question}
            placeholder="compare AAPL and MSFT closes since 2026-10-01"
            onInput={(e) => setQuestion((e.target as HTMLInputElement).value)}
          />
          <button type="submit" disabled={busy}>
            Ask
          </button>
        </form>
        <p class="small muted">
          Answered by the{' '}
          <span data-testid="planner">
            {planner === 'chat' ? 'configured chat model' : 'built-in planner'}
          </span>
          . Its reads are metered at your Terminal price; an answered question counts as one run of the day.
          It charts and computes on past data only: a question it asks back or does not answer (a forecast, a
          ranking) is free and not counted. Answers are saved only when you save them.
        </p>
        {questionEstimate && (
          <p class="small" data-testid="question-estimate" aria-live="polite">
            {questionEstimate.kind === 'estimate' ? (
              <>
                This question will cost about{' '}
                <strong data-testid="question-estimate-total">
                  {questionEstimate.estimate.tokens_burned}
                </strong>{' '}
                tokens ({questionEstimate.estimate.reads.length} metered read
                {questionEstimate.estimate.reads.length === 1 ? '' : 's'}).
                {questionEstimate.estimate.would_refuse &&
                  ` It would be refused now: ${questionEstimate.estimate.would_refuse}.`}
              </>
            ) : questionEstimate.kind === 'clarify' ? (
              'This question would not be answered as it stands: asking it is free.'
            ) : (
              questionEstimate.message
            )}
          </p>
        )}
        {answer && (
          <div role="status" aria-label="Assistant answer">
            <p class="small muted">
              Answered by the {answer.planner === 'chat' ? 'chat model' : 'built-in planner'}.
            </p>
            {answer.kind === 'analysis' ? (
              <>
                <p data-testid="explanation">{answer.explanation}</p>
                {answerSaved || answer.analysis ? (
                  <p class="small">Saved to your analyses.</p>
                ) : (
                  <button type="button" class="secondary" disabled={busy} onClick={saveAnswer}>
                    Save this analysis
                  </button>
                )}
              </>
            ) : (
              <>
                <p data-testid="clarification">{answer.message}</p>
                {answer.candidates.length > 0 && (
                  <ul class="row" aria-label="Candidates">
                    {answer.candidates.map((c) => (
                      <li key={c.value}>
                        <button
                          type="button"
                          class="secondary"
                          onClick={() => setQuestion(`${question} ${c.value}`.trim())}
                        >
                          {c.label}
                        </button>
                      </li>
                    ))}
                  </ul>
                )}
              </>
            )}
          </div>
        )}
      </section>

      {saved.length > 0 && (
        <section aria-labelledby="saved-title">
          <h2 id="saved-title">Saved analyses</h2>
          <ul class="analyze-saved" aria-label="Saved analyses">
            {saved.map((a) => (
              <li key={a.id}>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => open(a)}
                  aria-pressed={current?.id === a.id}
                >
                  {a.name}
                </button>{' '}
                <button
                  type="button"
                  class="secondary"
                  onClick={() => duplicate(a)}
                  aria-label={`Duplicate ${a.name}`}
                >
                  Duplicate
                </button>{' '}
                <button
                  type="button"
                  class="danger"
                  onClick={() => remove(a)}
                  aria-label={`Delete ${a.name}`}
                >
                  Delete
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}

      <section class="card analyze-composer" aria-labelledby="composer-title">
        <h2 id="composer-title">Composer{current ? `: ${current.name}` : ''}</h2>
        <label for="analysis-name">Analysis name</label>
        <input
          id="analysis-name"
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        {rows.map((r, i) => (
          <fieldset class="analyze-series" key={`${i}-${rows.length}`}>
            <legend>Series {i + 1}</legend>
            <label>
              Series {i + 1} id
              <input value={r.id} onInput={(e) => setRow(i, { id: (e.target as HTMLInputElement).value })} />
            </label>
            <label>
              Series {i + 1} dataset
              <input
                value={r.dataset}
                onInput={(e) => setRow(i, { dataset: (e.target as HTMLInputElement).value })}
              />
            </label>
            <label>
              Series {i + 1} entity
              <input
                value={r.entity}
                placeholder="symbol=AAPL"
                onInput={(e) => setRow(i, { entity: (e.target as HTMLInputElement).value })}
              />
            </label>
            <label>
              Series {i + 1} field
              <input
                value={r.field}
                onInput={(e) => setRow(i, { field: (e.target as HTMLInputElement).value })}
              />
            </label>
            <label>
              Series {i + 1} from
              <input
                value={r.from}
                placeholder="YYYY-MM-DD"
                onInput={(e) => setRow(i, { from: (e.target as HTMLInputElement).value })}
              />
            </label>
            <label>
              Series {i + 1} to
              <input
                value={r.to}
                placeholder="YYYY-MM-DD"
                onInput={(e) => setRow(i, { to: (e.target as HTMLInputElement).value })}
              />
            </label>
            {rows.length > 1 && (
              <button
                type="button"
                class="secondary"
                onClick={() => setRows((rs) => rs.filter((_, k) => k !== i))}
              >
                Remove series {i + 1}
              </button>
            )}
          </fieldset>
        ))}
        <button
          type="button"
          class="secondary"
          onClick={() => setRows((rs) => [...rs, emptyRow(rs.length + 1)])}
        >
          Add series
        </button>
        <label for="steps">Steps (JSON; see the manual's transforms)</label>
        <textarea
          id="steps"
          rows={4}
          value={stepsText}
          placeholder='[{"op": "pct_change", "input": "s1", "as": "s1_ret"}]'
          onInput={(e) => setStepsText((e.target as HTMLTextAreaElement).value)}
        />
        <label for="outputs">Outputs (JSON; empty: a line chart and statistics of every series)</label>
        <textarea
          id="outputs"
          rows={3}
          value={outputsText}
          onInput={(e) => setOutputsText((e.target as HTMLTextAreaElement).value)}
        />
        <p class="row">
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={() => act(async () => void (await save()))}
          >
            Save
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={doEstimate}>
            Estimate
          </button>
          <button type="button" disabled={busy || needsConfirm} onClick={doRun}>
            Run
          </button>
        </p>
        {estimate && (
          <section aria-label="Estimate">
            <ScrollRegion label="Reads of the run">
              <table>
                <caption>Every read the run will make, at your price now</caption>
                <thead>
                  <tr>
                    <th scope="col">series</th>
                    <th scope="col">dataset</th>
                    <th scope="col">field</th>
                    <th scope="col">tokens</th>
                  </tr>
                </thead>
                <tbody>
                  {estimate.reads.map((r) => (
                    <tr key={r.series}>
                      <td>{r.series}</td>
                      <td>{r.dataset}</td>
                      <td>{r.field}</td>
                      <td class="num">{r.tokens_burned}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
            <p>
              Estimated cost <strong data-testid="estimate-total">{estimate.tokens_burned}</strong> tokens (
              {estimate.cost_eur} EUR); balance after {estimate.balance_after}. Runs today{' '}
              {estimate.fair_use.runs_today} of {estimate.fair_use.runs_per_day}.
              {estimate.reuse && ' A rerun now reuses the result already paid for.'}
              {estimate.would_refuse && <strong> A run would be refused: {estimate.would_refuse}.</strong>}
            </p>
            {estimate.confirm_required && (
              <label class="inline">
                <input
                  type="checkbox"
                  checked={confirmed}
                  onChange={(e) => setConfirmed((e.target as HTMLInputElement).checked)}
                />
                Spend {estimate.tokens_burned} tokens on this run
              </label>
            )}
          </section>
        )}
        {error !== null && <ProblemBox error={error} onRetry={doRun} />}
      </section>

      {result && <ResultView result={result} analysisId={result.analysis_id ?? current?.id ?? null} />}
    </>
  );
}
