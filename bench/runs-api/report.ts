import type { Figures } from './load.js';

export interface Comparison {
  database: 'PostgreSQL' | 'PGlite';
  /** Runs in the table when measured (list scenarios); undefined for creates, which add rows as they go. */
  runs: number | undefined;
  scenario: string;
  /** Set for the light-load latency rows: both sides get the same fixed rate, so only latency compares. */
  fixedRate?: number;
  ours: Figures;
  baseline: Figures;
}

/** The targets set for PostgreSQL; PGlite (one in-process connection) is reported without a verdict. */
export const TARGET_RATIO = 0.7;
export const TARGET_LIST_P99_MS = 15;

export const ratio = (c: Comparison) => c.ours.requestsPerSecond / c.baseline.requestsPerSecond;

export function verdict(c: Comparison): string {
  // A search has no target of its own: its figure is its cost beside the plain list.
  if (c.database !== 'PostgreSQL' || c.scenario.startsWith('GET search')) return '-';
  const checks = c.fixedRate ? [] : [`ratio >= ${TARGET_RATIO}: ${ratio(c) >= TARGET_RATIO ? 'met' : 'MISSED'}`];
  if (c.scenario.startsWith('GET'))
    checks.push(`p99 < ${TARGET_LIST_P99_MS} ms: ${c.ours.p99Ms < TARGET_LIST_P99_MS ? 'met' : 'MISSED'}`);
  return checks.join(', ');
}

const runsLabel = (runs: number | undefined) =>
  runs === undefined
    ? '-'
    : runs >= 1_000_000
      ? `${runs / 1_000_000}M`
      : runs >= 1000
        ? `${runs / 1000}k`
        : String(runs);

const noise = (f: Figures) => (f.othersCpuPercent === undefined ? '?' : `${Math.round(f.othersCpuPercent)}%`);
/** CPU milliseconds per request, Node + PostgreSQL backends (PGlite's share is inside Node's). */
const cpu = (f: Figures) =>
  f.serverCpuMs === undefined
    ? '?'
    : `${f.serverCpuMs.toFixed(2)}${f.postgresCpuMs === undefined ? '' : ` + ${f.postgresCpuMs.toFixed(2)}`}`;
const figures = (f: Figures) =>
  `${Math.round(f.requestsPerSecond)} req/s, p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms, CPU ${cpu(f)} ms/req (others' CPU ${noise(f)})`;

/** One line per comparison as soon as it is measured. */
export function progressLine(c: Comparison): string {
  const tail = c.fixedRate ? '' : ` | ratio ${ratio(c).toFixed(2)}`;
  return `${c.database} ${runsLabel(c.runs)} ${c.scenario}: ours ${figures(c.ours)} | baseline ${figures(c.baseline)}${tail}`;
}

/** The summary as a Markdown table, ready to paste into RESULTS.md. */
export function markdownTable(comparisons: Comparison[]): string {
  const header = [
    "| database | runs | scenario | ours req/s | ours p50 / p99 (ms) | baseline req/s | baseline p50 / p99 (ms) | ratio | targets | CPU ms/req, Node + PG: ours / baseline | others' CPU: ours / baseline |",
    '|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|',
  ];
  const rows = comparisons.map((c) =>
    [
      c.database,
      runsLabel(c.runs),
      c.scenario,
      Math.round(c.ours.requestsPerSecond),
      `${c.ours.p50Ms} / ${c.ours.p99Ms}`,
      Math.round(c.baseline.requestsPerSecond),
      `${c.baseline.p50Ms} / ${c.baseline.p99Ms}`,
      c.fixedRate ? '-' : ratio(c).toFixed(2),
      verdict(c),
      `${cpu(c.ours)} / ${cpu(c.baseline)}`,
      `${noise(c.ours)} / ${noise(c.baseline)}`,
    ].join(' | '),
  );
  return [...header, ...rows.map((row) => `| ${row} |`)].join('\n');
}
