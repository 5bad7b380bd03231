/** The composer: an analysis's name, series, steps and outputs; save, estimate and run it. */
import type { ComponentChildren } from 'preact';
import type { Draft } from './draft.ts';
import { emptyRow } from './draft.ts';
import { SeriesFieldset } from './series-fieldset.tsx';

export interface ComposerProps {
  /** The name of the saved analysis open in the composer, if any. */
  currentName: string | null;
  draft: Draft;
  onDraft: (update: (draft: Draft) => Draft) => void;
  busy: boolean;
  /** A run that asks for confirmation is not offered until it is given. */
  runBlocked: boolean;
  onSave: () => void;
  onEstimate: () => void;
  onRun: () => void;
  /** The estimate and any problem, shown under the buttons. */
  children?: ComponentChildren;
}

export function Composer({ currentName, draft, onDraft, busy, runBlocked, ...props }: ComposerProps) {
  const { rows } = draft;
  const setRows = (update: (rows: Draft['rows']) => Draft['rows']) =>
    onDraft((d) => ({ ...d, rows: update(d.rows) }));
  return (
    <section class="card analyze-composer" aria-labelledby="composer-title">
      <h2 id="composer-title">Composer{currentName !== null ? `: ${currentName}` : ''}</h2>
      <label for="analysis-name">Analysis name</label>
      <input
        id="analysis-name"
        value={draft.name}
        onInput={(e) => {
          const name = (e.target as HTMLInputElement).value;
          onDraft((d) => ({ ...d, name }));
        }}
      />
      {rows.map((r, i) => (
        <SeriesFieldset
          key={`${i}-${rows.length}`}
          row={r}
          index={i}
          removable={rows.length > 1}
          onChange={(patch) => setRows((rs) => rs.map((x, k) => (k === i ? { ...x, ...patch } : x)))}
          onRemove={() => setRows((rs) => rs.filter((_, k) => k !== i))}
        />
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
        value={draft.stepsText}
        placeholder='[{"op": "pct_change", "input": "s1", "as": "s1_ret"}]'
        onInput={(e) => {
          const stepsText = (e.target as HTMLTextAreaElement).value;
          onDraft((d) => ({ ...d, stepsText }));
        }}
      />
      <label for="outputs">Outputs (JSON; empty: a line chart and statistics of every series)</label>
      <textarea
        id="outputs"
        rows={3}
        value={draft.outputsText}
        onInput={(e) => {
          const outputsText = (e.target as HTMLTextAreaElement).value;
          onDraft((d) => ({ ...d, outputsText }));
        }}
      />
      <p class="row">
        <button type="button" class="secondary" disabled={busy} onClick={props.onSave}>
          Save
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={props.onEstimate}>
          Estimate
        </button>
        <button type="button" disabled={busy || runBlocked} onClick={props.onRun}>
          Run
        </button>
      </p>
      {props.children}
    </section>
  );
}
