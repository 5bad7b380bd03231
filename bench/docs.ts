/**
 * npm run bench:docs: rewrites the figures in docs/benchmarks.md from bench/results/latest.json (what
 * `npm run bench` and `npm run bench -- --grow` last measured), between its marker comments. Sections
 * without results keep what the page says.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Figures } from './lib.ts';
import { RESULTS_FILE } from './lib.ts';

const PAGE = 'docs/benchmarks.md';

interface Machine {
  cpus: number;
  cpuModel: string;
  node: string;
  platform: string;
}
interface RunResults {
  measuredAt: string;
  machine: Machine;
  options: {
    dataset: string;
    limit: number;
    connections: number;
    heavy: number;
    rounds: number;
    seconds: number;
    log?: boolean;
  };
  figures: Record<string, Figures>;
  runs: Record<string, Figures[]>;
  ratios: Record<string, number | null>;
  mcp: { answered: number; burns: number; match: boolean };
  audit: { count: number; clean: boolean; wallets: number; entries: number };
}
interface GrowResults {
  measuredAt: string;
  machine: Machine;
  options: { dataset: string; limit: number; connections: number; rounds: number; seconds: number };
  results: { id: string; name: string; figures: Figures; change: number | null; runs: Figures[] }[];
  audit: { count: number; clean: boolean };
}

interface DataResults {
  measuredAt: string;
  machine: Machine;
  options: {
    backend: string;
    dataset: string;
    rows: { small: number; large: number; external?: number };
    connections: number;
    rounds: number;
    seconds: number;
    scanCap: number;
  };
  reads: { id: string; name: string; query: string; figures: Figures; runs: Figures[] }[];
  ratios: Record<string, number | null>;
  isolation: { otherP99: number; runs: { worst: Figures; other: Figures }[] };
  audit: { count: number; clean: boolean };
}

const all = JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as Record<string, unknown>;
const us = (value: number | null | undefined) =>
  value === null || value === undefined ? '—' : `${value.toFixed(0)} µs`;
const times = (value: number | null | undefined) =>
  value === null || value === undefined ? '—' : `${value.toFixed(2)} ×`;
const range = (runs: Figures[] | undefined) => {
  const cpus = (runs ?? []).map((r) => r.cpuUs).filter((v): v is number => v !== null);
  if (cpus.length < 2) return '';
  return ` (${Math.min(...cpus).toFixed(0)}–${Math.max(...cpus).toFixed(0)})`;
};
const day = (iso: string) => iso.slice(0, 10);
const machineLine = (m: Machine) =>
  `${m.cpus} × ${m.cpuModel}, ${m.platform}, Node ${m.node.replace(/^v/, '')}`;

function runTable(r: RunResults, backendName: string): string {
  const o = r.options;
  const f = r.figures;
  const rows: [string, string, Figures | undefined, string, string][] = [
    [
      '(a) metered REST read, wallet key',
      'a',
      f.a,
      `${times(r.ratios['a/b cpu'])} (b)`,
      r.ratios['a/b cpu, all processes'] === undefined ? '≤ 1.8 × (b)' : '',
    ],
    ['(b) bare Fastify route, same page', 'b', f.b, '', ''],
    ['(c) MCP `read_dataset`, 2025-11-25', 'c', f.c, `${times(r.ratios['c/a cpu'])} (a)`, '≤ 1.4 × (a)'],
    ['(d) MCP `read_dataset`, 2026-07-28', 'd', f.d, `${times(r.ratios['d/a cpu'])} (a)`, '≤ 1.4 × (a)'],
  ];
  for (const id of Object.keys(f)) {
    if (id.startsWith('a@'))
      rows.push([
        `(a) at ${id.slice(2)} connections`,
        id,
        f[id],
        `${times(r.ratios[`a/b cpu at ${id.slice(2)}`])} (b)`,
        '',
      ]);
    if (id.startsWith('b@')) rows.push([`(b) at ${id.slice(2)} connections`, id, f[id], '', '']);
    if (id === 'a*') rows.push(['(a*) metered, many wallets', id, f[id], '', '']);
  }
  const lines = [
    `${backendName}, ${o.connections} connections, \`${o.dataset}?limit=${o.limit}\`, ${o.rounds} interleaved rounds of ${o.seconds} s (medians; the range over rounds in brackets), measured ${day(r.measuredAt)} on ${machineLine(r.machine)}.`,
    '',
    '| mode | service CPU per request | ratio | target | req/s | p50 | p99 | service RSS |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, id, figures, ratio, target] of rows) {
    if (!figures) continue;
    lines.push(
      `| ${name} | ${us(figures.cpuUs)}${range(r.runs[id])} | ${ratio} | ${target} | ${figures.rps.toFixed(0)} | ${figures.p50} ms | ${figures.p99} ms | ${figures.rssMb === null ? '—' : `${figures.rssMb.toFixed(0)} MB`} |`,
    );
  }
  lines.push('');
  const all = r.ratios['a/b cpu, all processes'];
  if (all !== undefined) {
    const cpu = (x: Figures | undefined) => (x?.cpuUs ?? 0) + (x?.postgresUs ?? 0) + (x?.redisUs ?? 0);
    lines.push(
      `CPU of all processes (service, PostgreSQL, Redis) per request: (a) ${us(cpu(f.a))}, (b) ${us(cpu(f.b))}: (a) = ${times(all)} (b) (target ≤ 2.0 ×).`,
      '',
    );
  }
  lines.push(
    `p99 of (a) = ${times(r.ratios['a/b p99'])} (b) (target ≤ 1.3 ×). Ledger audited after every mode of every round and at the end (${r.audit.count} audits): ${r.audit.clean ? 'clean' : '**mismatches**'}, ${r.audit.wallets} wallets, ${r.audit.entries.toLocaleString('en')} entries. MCP: ${r.mcp.answered.toLocaleString('en')} calls answered 2xx, ${r.mcp.burns.toLocaleString('en')} burns${r.mcp.match ? '' : ' (**mismatch**)'}.`,
  );
  return lines.join('\n');
}

function growTable(g: GrowResults): string {
  const o = g.options;
  const lines = [
    `SQLite, ${o.connections} connections, \`${o.dataset}?limit=${o.limit}\`, every request the next customer's key, ${o.rounds} interleaved rounds of ${o.seconds} s (medians; the range over rounds in brackets), measured ${day(g.measuredAt)} on ${machineLine(g.machine)}.`,
    '',
    '| database | service CPU per metered read | change | target | req/s | p99 | service RSS (target < 250 MB) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of g.results) {
    const change =
      r.change === null
        ? '—'
        : r.id === 'rows-10k'
          ? 'the base'
          : `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(1)} %`;
    lines.push(
      `| ${r.name} | ${us(r.figures.cpuUs)}${range(r.runs)} | ${change} | ${r.id === 'rows-10k' ? '' : '< 10 %'} | ${r.figures.rps.toFixed(0)} | ${r.figures.p99} ms | ${r.figures.rssMb === null ? '—' : `${r.figures.rssMb.toFixed(0)} MB`} |`,
    );
  }
  lines.push(
    '',
    `Ledgers audited after every run (${g.audit.count} audits): ${g.audit.clean ? 'clean' : '**mismatches**'}.`,
  );
  return lines.join('\n');
}

function dataTable(d: DataResults): string {
  const o = d.options;
  const byId = new Map(d.reads.map((r) => [r.id, r]));
  // On PostgreSQL + Redis a read's work is shared with the database: CPU of all three processes.
  const cpuName = o.backend === 'postgres' ? 'CPU (service + PostgreSQL + Redis)' : 'service CPU';
  const cost = (f: Figures | undefined) =>
    f?.cpuUs === null || f?.cpuUs === undefined ? null : f.cpuUs + (f.postgresUs ?? 0) + (f.redisUs ?? 0);
  const costRange = (runs: Figures[] | undefined) => {
    const all = (runs ?? []).map(cost).filter((v): v is number => v !== null);
    return all.length < 2 ? '' : ` (${Math.min(...all).toFixed(0)}–${Math.max(...all).toFixed(0)})`;
  };
  const lines = [
    `${o.backend === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite (WAL)'}, \`${o.dataset}\`, ${o.rows.small.toLocaleString('en')} and ${o.rows.large.toLocaleString('en')} rows, ${o.connections} connections, ${o.rounds} interleaved rounds of ${o.seconds} s (medians; the range over rounds in brackets), scan cap ${o.scanCap.toLocaleString('en')} rows, measured ${day(d.measuredAt)} on ${machineLine(d.machine)}.`,
    '',
    `| read | query | ${cpuName}, ${o.rows.small.toLocaleString('en')} rows | ${cpuName}, ${o.rows.large.toLocaleString('en')} rows | large / newest (target ≤ 2 ×) | large / small (target ≤ 1.3 ×) | p99, large |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const read of d.reads.filter((r) => r.id.startsWith('small:'))) {
    const id = read.id.slice('small:'.length);
    const large = byId.get(`large:${id}`);
    const indexed = d.ratios[`${id}/newest, large`] !== undefined;
    lines.push(
      `| ${read.name.slice('small: '.length)} | \`${read.query}\` | ${us(cost(read.figures))}${costRange(read.runs)} | ${us(cost(large?.figures))}${costRange(large?.runs)} | ${indexed ? times(d.ratios[`${id}/newest, large`]) : ''} | ${indexed ? times(d.ratios[`${id}, large/small`]) : ''} | ${large ? `${large.figures.p99} ms` : '—'} |`,
    );
  }
  lines.push(
    '',
    `Worst read = ${times(d.ratios['worst/median, large'])} the median read on the large dataset (target ≤ 10 ×). Another key's p99 while 16 connections of worst reads run from one key: ${d.isolation.otherP99} ms (target < 50 ms; by round ${d.isolation.runs.map((r) => `${r.other.p99} ms`).join(', ')}). Ledgers audited after every run (${d.audit.count} audits): ${d.audit.clean ? 'clean' : '**mismatches**'}.`,
  );
  return lines.join('\n');
}

/** The same reads of the same rows, stored and from an operator's table (`--data --external`). */
function externalTable(d: DataResults): string {
  const byId = new Map(d.reads.map((r) => [r.id, r]));
  const cost = (f: Figures | undefined) =>
    f?.cpuUs === null || f?.cpuUs === undefined ? null : f.cpuUs + (f.postgresUs ?? 0) + (f.redisUs ?? 0);
  const lines = [
    `PostgreSQL + Redis, \`${d.options.dataset}\`, ${d.options.rows.large.toLocaleString('en')} rows stored and the same rows in an operator's table (indexed on each entity column and on time), ${d.options.connections} connections, ${d.options.rounds} interleaved rounds of ${d.options.seconds} s (medians), measured ${day(d.measuredAt)} on ${machineLine(d.machine)}. CPU of the service, PostgreSQL and Redis per read.`,
    '',
    '| read | stored | operator table | operator table / stored | p99, operator table |',
    '|---|---|---|---|---|',
  ];
  for (const read of d.reads.filter((r) => r.id.startsWith('large:'))) {
    const id = read.id.slice('large:'.length);
    const ext = byId.get(`external:${id}`);
    const a = cost(read.figures);
    const b = cost(ext?.figures);
    lines.push(
      `| ${read.name.slice('large: '.length)} | ${us(a)} | ${us(b)} | ${a === null || b === null ? '—' : times(b / a)} | ${ext ? `${ext.figures.p99} ms` : '—'} |`,
    );
  }
  lines.push('', `Target: one entity's page within 1.5 × the same read of stored rows.`);
  return lines.join('\n');
}

interface LiveGroup {
  reads: number;
  non200: number;
  mixed: number;
  p50: number;
  p99: number;
}
interface LiveResults {
  measuredAt: string;
  machine: Machine;
  options: { backend: string; dataset: string; rows: number; kills: number; connections: number };
  baseline: { imported: LiveGroup; other: LiveGroup };
  killed: { imported: LiveGroup; other: LiveGroup };
  figures: {
    seconds: number;
    rowsPerSecond: number;
    peakRssBytes: number;
    imported: LiveGroup;
    other: LiveGroup;
    newRowsServed: boolean;
    burnsMatchReads: boolean;
  };
  audit: { clean: boolean };
}
function liveTable(l: LiveResults): string {
  const o = l.options;
  const row = (phase: string, group: string, g: LiveGroup) =>
    `| ${phase} | ${group} | ${g.reads.toLocaleString('en')} | ${g.non200} | ${g.mixed} | ${g.p50} ms | ${g.p99} ms |`;
  return [
    `${o.backend === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite (WAL)'}: \`tmd import ${o.dataset} <file> --replace\` of ${o.rows.toLocaleString('en')} rows into a running service while ${o.connections} connections read (half that dataset, half another), measured ${day(l.measuredAt)} on ${machineLine(l.machine)}. The import took ${l.figures.seconds.toFixed(1)} s (${l.figures.rowsPerSecond.toLocaleString('en')} rows/s) at ${(l.figures.peakRssBytes / 1048576).toFixed(0)} MB peak resident.`,
    '',
    '| phase | reads of | reads | non-2xx | pages mixing old and new | p50 | p99 |',
    '|---|---|---|---|---|---|---|',
    row('no import', 'the dataset', l.baseline.imported),
    row('no import', 'another dataset', l.baseline.other),
    row(`${o.kills} imports killed (kill -9)`, 'the dataset', l.killed.imported),
    row(`${o.kills} imports killed (kill -9)`, 'another dataset', l.killed.other),
    row('the import', 'the dataset', l.figures.imported),
    row('the import', 'another dataset', l.figures.other),
    '',
    `New rows served after the swap: ${l.figures.newRowsServed ? 'yes' : '**no**'}. One burn per read served: ${l.figures.burnsMatchReads ? 'yes' : '**no**'}. Ledger audit: ${l.audit.clean ? 'clean' : '**mismatches**'}.`,
  ].join('\n');
}

let page = readFileSync(PAGE, 'utf8');
function replace(marker: string, text: string): void {
  const start = `<!-- ${marker}:start (npm run bench:docs) -->`;
  const end = `<!-- ${marker}:end -->`;
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${PAGE} has no ${start} … ${end} markers`);
  page = `${page.slice(0, from + start.length)}\n${text}\n${page.slice(to)}`;
}
const sections: [string, string, (value: never) => string][] = [
  ['sqlite', 'bench:sqlite', (r: RunResults) => runTable(r, 'SQLite (WAL), in-process limits')],
  [
    'sqlite-logged',
    'bench:sqlite-logged',
    (r: RunResults) => runTable(r, 'SQLite (WAL), in-process limits, request log on'),
  ],
  ['postgres', 'bench:postgres', (r: RunResults) => runTable(r, 'PostgreSQL + Redis')],
  ['grow', 'bench:grow', (g: GrowResults) => growTable(g)],
  ['data-sqlite', 'bench:data-sqlite', (d: DataResults) => dataTable(d)],
  ['data-postgres', 'bench:data-postgres', (d: DataResults) => dataTable(d)],
  ['data-external', 'bench:data-external', (d: DataResults) => externalTable(d)],
  ['live-import-sqlite', 'bench:live-import-sqlite', (l: LiveResults) => liveTable(l)],
  ['live-import-postgres', 'bench:live-import-postgres', (l: LiveResults) => liveTable(l)],
];
for (const [section, marker, render] of sections) {
  if (all[section] === undefined || !page.includes(`<!-- ${marker}:start`)) continue;
  replace(marker, render(all[section] as never));
  console.log(`${PAGE}: ${marker} updated`);
}
writeFileSync(PAGE, page);
