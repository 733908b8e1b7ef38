// The benchmark's results as Markdown: the table of targets, the settings used, the machine.
import { availableParallelism, cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import { SETTINGS, type Setting } from '../src/config/settings.js';

/** A timing measured several times; null samples are runs that timed out. */
export interface TimingRow {
  kind: 'timing';
  name: string;
  /** null: informational, no target. */
  targetMs: number | null;
  knh: string;
  samples: (number | null)[];
}

/** A count of events that must not happen (target: 0). */
export interface CountRow {
  kind: 'count';
  name: string;
  runs: string;
  count: number;
}

export type Row = TimingRow | CountRow;

export interface MachineFacts {
  date: string;
  nproc: number;
  cpu: string;
  memory: string;
  node: string;
  os: string;
  load: string;
}

export function machineFacts(): MachineFacts {
  return {
    date: new Date().toISOString(),
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: process.version,
    os: `${osType()} ${release()}`,
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' / '),
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const at = (i: number) => sorted[i] ?? NaN;
  return sorted.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** PASS only when every run produced a sample under the target. */
export function passed(row: Row): boolean | null {
  if (row.kind === 'count') return row.count === 0;
  if (row.targetMs === null) return null;
  const target = row.targetMs;
  return row.samples.every((s) => s !== null && s < target);
}

function cells(row: Row): string[] {
  const verdict = passed(row);
  const result = verdict === null ? 'info' : verdict ? 'PASS' : '**FAIL**';
  if (row.kind === 'count') {
    return [row.name, '0', '—', row.runs, '—', '—', '—', `${result}: ${row.count} received`];
  }
  const ok = row.samples.filter((s): s is number => s !== null);
  const timeouts = row.samples.length - ok.length;
  const stat = (f: (v: number[]) => number) => (ok.length > 0 ? secs(f(ok)) : '—');
  return [
    row.name,
    row.targetMs === null ? '—' : `< ${row.targetMs / 1000} s`,
    row.knh,
    `${ok.length}/${row.samples.length}${timeouts > 0 ? ` (${timeouts} timed out)` : ''}`,
    stat((v) => Math.min(...v)),
    stat(median),
    stat((v) => Math.max(...v)),
    result,
  ];
}

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (c: readonly string[]) => `| ${c.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function resultsTable(rows: readonly Row[]): string {
  return table(
    ['Measurement', 'Target', 'KNH', 'Runs', 'Min', 'Median', 'Max', 'Result'],
    rows.map(cells),
  );
}

export const RELEVANT_SETTINGS = [
  'ELECTION_COOLDOWN_PERIOD',
  'PROBE_TIMEOUT',
  'UNHEALTHY_DURATION',
  'INDIRECT_PROBES',
  'CONNECT_MAX_RETRIES',
  'CONNECT_COOLDOWN_PERIOD',
  'SEND_MAX_RETRIES',
  'SEND_COOLDOWN_PERIOD',
  'HEARTBEAT_INTERVAL',
  'COORDINATOR_TIMEOUT',
  'ELECTION_TIMEOUT',
  'CLUSTER_STATUS_INTERVAL',
  'WEBHOOK_TIMEOUT',
  'WEBHOOK_RETRY_FOR',
  'LOG_LEVEL',
] as const;

/** A setting's default as settings.ts declares it; throws for one without. */
export function defaultOf(env: string): string {
  const setting = (SETTINGS as readonly Setting[]).find((s) => s.env === env);
  if (setting?.default === undefined) throw new Error(`no default for ${env} in settings.ts`);
  return setting.default;
}

export function relevantSettings(): Setting[] {
  const all = SETTINGS as readonly Setting[];
  return RELEVANT_SETTINGS.flatMap((name) => all.filter((s) => s.env === name));
}

export function settingsTable(): string {
  return table(
    ['Setting', 'Default', 'Unit', 'Meaning'],
    relevantSettings().map((s) => [
      `\`${s.env}\``,
      s.default ?? s.defaultText ?? '—',
      s.unit ?? '',
      s.description.replace(/\|/g, '\\|'),
    ]),
  );
}

export interface ReportInput {
  facts: MachineFacts;
  rows: readonly Row[];
  repeat: number;
  steadySeconds: number;
  totalSeconds: number;
  falseAlarmWindowMs: number;
  /** Lines printed under the table. */
  notes: readonly string[];
}

export function markdownReport(r: ReportInput): string {
  const f = r.facts;
  return `## Loopback

Produced by \`npm run bench\` (bench/bench.ts): ${r.repeat} runs of each timing, a ${r.steadySeconds} s steady run, 5 real knh processes on loopback with default settings (only the webhook URLs set), webhooks received by the in-process receiver (src/demo/webhook-sink.ts). This block is rewritten by every run.

Run on ${f.date}: ${f.nproc} CPUs (nproc; ${f.cpu}), ${f.memory} RAM, Node ${f.node}, ${f.os}; load average at start (1/5/15 min) ${f.load}. Whole run: ${Math.round(r.totalSeconds)} s.

${resultsTable(r.rows)}

PASS means every run was under the target; a run that timed out counts as a miss.
${r.notes.map((n) => `\n${n}`).join('')}

How each row is measured:

- **Election**: a fresh mesh each run; from spawning the 5 processes (process start-up included) to the receiver getting the first \`cluster_status\` from the highest-ranked node listing all 4 peers alive (reason \`election\`, or \`change\` when its first round still found some peer starting).
- **Crashed peer**: SIGKILL to a node that is not the coordinator, to the receiver getting its \`peer_dead\`; the node is then restarted (next row: restart to its \`peer_recovered\`).
- **Crashed coordinator**: SIGKILL to the coordinator, to the receiver getting a \`cluster_status\` from another node; the old coordinator is then restarted, and as the highest-ranked node it takes over again (next row: restart to its first \`cluster_status\`).
- **False alarms**: a \`peer_dead\` for a peer that was up for the whole span of the probe that condemned it (${(r.falseAlarmWindowMs / 1000).toFixed(1)} s before the verdict: every retry timing out, from the defaults) is a dead-peer webhook for a live node. The steady run kills nothing, so every \`peer_dead\` in it counts.

Settings (defaults from src/config/settings.ts):

${settingsTable()}
`;
}
