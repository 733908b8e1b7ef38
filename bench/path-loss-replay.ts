// The path-loss bench's recording, read: what each phase's probes looked like, what a sliding window
// of them shows, and what the path window and the degradation verdict (src/paths/) make of them when
// replayed, with the defaults and with the alternatives they were chosen against.
import { judgeDegradation, newDegradation } from '../src/paths/degradation.js';
import { DEFAULT_PATH_DEGRADATION, type PathDegradationSettings } from '../src/paths/defaults.js';
import { mergeStats } from '../src/paths/merge-stats.js';
import { nearestRank, PathWindow, statsOf, type PathSample } from '../src/paths/path-window.js';
import type { ProbeLine } from './path-loss-ends.js';
import { median, table, type MachineFacts } from './report.js';

export interface Phase {
  name: string;
  /** Share of the requests dropped (at the server's INPUT). */
  requestLoss: number;
  /** Share of the answers dropped (at the client's INPUT). */
  answerLoss: number;
  seconds: number;
  startMs: number;
  endMs: number;
}

export interface Recording {
  facts: MachineFacts;
  phases: Phase[];
  probes: ProbeLine[];
}

/** A probe's outcome with when it was known (sent + latency): when a prober would record it. */
interface Outcome extends PathSample {
  doneMs: number;
}

/** A replay needs this long of its lossy phase after the onset it starts from. */
const REPLAY_SPAN_MS = 60_000;
/** A latency a TCP retransmission is behind (Linux's minimum RTO is 200 ms). */
const RETRANSMITTED_MS = 200;

const ms = (v: number | null) => (v === null ? '—' : `${Math.round(v)} ms`);
const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
const secs = (v: number) => `${(v / 1_000).toFixed(0)} s`;
const range = (values: readonly number[], f: (v: number) => string) =>
  values.length === 0
    ? '—'
    : `${f(Math.min(...values))} / ${f(median(values))} / ${f(Math.max(...values))}`;

function outcomes(probes: readonly ProbeLine[]): Outcome[] {
  return probes
    .map((p) => ({
      atMs: p.atMs,
      ok: p.ok,
      latencyMs: p.ok ? p.latencyMs : null,
      doneMs: p.atMs + p.latencyMs,
    }))
    .sort((a, b) => a.doneMs - b.doneMs);
}

function inPhase(r: Recording, phase: Phase): Outcome[] {
  return outcomes(r.probes.filter((p) => p.atMs >= phase.startMs && p.atMs < phase.endMs));
}

const lossy = (p: Phase) => p.requestLoss > 0 || p.answerLoss > 0;

/** Each second's window (of the phase's probes alone) over the phase, as the verdict sees them. */
function windowsOver(phase: Phase, list: readonly Outcome[], windowMs: number) {
  const loss: number[] = [];
  const p99: number[] = [];
  for (let end = phase.startMs + windowMs; end <= phase.endMs; end += 1_000) {
    const s = statsOf(list.filter((o) => o.doneMs <= end && o.doneMs > end - windowMs));
    loss.push(s.lossRatio);
    if (s.p99Ms !== null) p99.push(s.p99Ms);
  }
  return { loss, p99 };
}

function phaseRow(r: Recording, phase: Phase, windowMs: number): string[] {
  const list = inPhase(r, phase);
  const s = statsOf(list);
  const answered = list.flatMap((o) => (o.latencyMs === null ? [] : [o.latencyMs]));
  answered.sort((a, b) => a - b);
  const slow = answered.filter((l) => l >= RETRANSMITTED_MS).length;
  const w = windowsOver(phase, list, windowMs);
  return [
    phase.name,
    String(s.samples),
    `${s.failures} (${pct(s.lossRatio)})`,
    `${ms(s.p50Ms)} / ${answered.length ? ms(nearestRank(answered, 90)) : '—'} / ${ms(s.p99Ms)} / ${answered.length ? ms(answered.at(-1)!) : '—'}`,
    `${slow} (${pct(slow / Math.max(1, s.samples))})`,
    range(w.loss, pct),
    range(w.p99, ms),
  ];
}

type Transitions = { atMs: number; transition: string }[];

/**
 * Replays each stream into a window of its own and judges after every outcome: one stream is a
 * path, several are a node's paths, judged on their merged figures.
 */
function replay(
  streams: readonly (readonly Outcome[])[],
  settings: PathDegradationSettings,
  startMs: number,
): Transitions {
  const windows = streams.map(() => new PathWindow({ pathWindowMs: settings.pathWindowMs }));
  const events = streams
    .flatMap((list, path) => list.map((o) => ({ o, path })))
    .sort((a, b) => a.o.doneMs - b.o.doneMs);
  let record = newDegradation(startMs);
  const out: Transitions = [];
  for (const { o, path } of events) {
    windows[path]!.record(o);
    const stats =
      windows.length === 1
        ? windows[0]!.stats(o.doneMs)
        : mergeStats(windows.map((w) => w.stats(o.doneMs)));
    const j = judgeDegradation(record, stats, o.doneMs, settings);
    record = j.record;
    if (j.transition) out.push({ atMs: o.doneMs, transition: j.transition });
  }
  return out;
}

/** `list`'s outcomes sent in [fromMs, fromMs + REPLAY_SPAN_MS), moved by `shiftMs`. */
function segment(list: readonly Outcome[], fromMs: number, shiftMs: number): Outcome[] {
  return list
    .filter((o) => o.atMs >= fromMs && o.atMs < fromMs + REPLAY_SPAN_MS)
    .map((o) => ({ ...o, atMs: o.atMs + shiftMs, doneMs: o.doneMs + shiftMs }));
}

/** Path i's segment starts PATH_SPACING_MS after path i − 1's, wrapping within the phase. */
const PATH_SPACING_MS = 7_000;

function segmentStart(phase: Phase, offsetMs: number): number {
  const starts = Math.max(1_000, phase.endMs - phase.startMs - REPLAY_SPAN_MS + 1_000);
  return phase.startMs + (offsetMs % starts);
}

/**
 * Time to became-degraded after the onset of `phase`'s loss, replayed from each second of the
 * phase that leaves REPLAY_SPAN_MS after it: for each of `paths` paths, a minute of the first
 * clean phase, then a minute of the lossy probes, shifted to follow on (path i's minutes start
 * i × PATH_SPACING_MS later in their phases, so the paths do not see the same probes at once).
 * null: not degraded within the minute.
 */
export function detectionTimes(
  r: Recording,
  phase: Phase,
  settings: PathDegradationSettings,
  paths = 1,
): (number | null)[] {
  const clean = r.phases.find((p) => !lossy(p));
  if (!clean) return [];
  const [before, bad] = [inPhase(r, clean), inPhase(r, phase)];
  const onset = clean.endMs;
  const times: (number | null)[] = [];
  for (let from = 0; phase.startMs + from + REPLAY_SPAN_MS <= phase.endMs; from += 1_000) {
    const streams = Array.from({ length: paths }, (_, i) => {
      const cleanFrom = segmentStart(clean, clean.endMs - clean.startMs - i * PATH_SPACING_MS);
      const badFrom = segmentStart(phase, from + i * PATH_SPACING_MS);
      return [
        ...segment(before, cleanFrom, onset - REPLAY_SPAN_MS - cleanFrom),
        ...segment(bad, badFrom, onset - badFrom),
      ];
    });
    const first = replay(streams, settings, onset - REPLAY_SPAN_MS).find(
      (t) => t.transition === 'became-degraded',
    );
    times.push(first ? first.atMs - onset : null);
  }
  return times;
}

function detectionCell(times: readonly (number | null)[]): string {
  const found = times.filter((t): t is number => t !== null);
  const missed = times.length - found.length;
  if (found.length === 0) return `never (${times.length} starts)`;
  return `${range(found, secs)}${missed ? `, missed ${missed}/${times.length}` : ''}`;
}

/** The whole recording replayed in order: each transition with the phase it fell in. */
function timeline(r: Recording, settings: PathDegradationSettings): string[] {
  const first = r.phases[0];
  if (!first) return [];
  return replay([outcomes(r.probes)], settings, first.startMs).map((t) => {
    const phase = r.phases.find((p) => t.atMs >= p.startMs && t.atMs < p.endMs + 1_500);
    return phase
      ? `${t.transition} ${secs(t.atMs - phase.startMs)} into “${phase.name}”`
      : `${t.transition} at ${t.atMs}`;
  });
}

/** A node of the 5-host target: the 4 paths from it and the 4 to it, merged. */
const NODE_PATHS = 8;

const tweak = (name: string, change: Partial<PathDegradationSettings>) => ({
  name,
  settings: { ...DEFAULT_PATH_DEGRADATION, ...change },
});

/** The option sets compared: the defaults first, then one change at a time. */
export const ALTERNATIVES: readonly { name: string; settings: PathDegradationSettings }[] = [
  { name: 'defaults', settings: DEFAULT_PATH_DEGRADATION },
  tweak('latency 300 ms', { degradedLatencyMs: 300 }),
  tweak('latency 500 ms', { degradedLatencyMs: 500 }),
  tweak('loss 20 %', { degradedLossRatio: 0.2 }),
  tweak('sustain 5 s', { degradedForMs: 5_000 }),
  tweak('window and sustain 15 s', { pathWindowMs: 15_000, degradedForMs: 15_000 }),
  tweak('window 30 s, 10 samples', { pathWindowMs: 30_000, minSamples: 10 }),
];

const DETECTED = [
  '25 % each way',
  '25 % one way (requests)',
  '20 % each way',
  '10 % each way',
  '5 % each way',
  '0 %',
];

function alternativeRow(r: Recording, alt: (typeof ALTERNATIVES)[number], paths: number): string[] {
  const s = alt.settings;
  const cells = DETECTED.map((name) => {
    const phase = r.phases.find((p) => p.name === name);
    return phase ? detectionCell(detectionTimes(r, phase, s, paths)) : '—';
  });
  const options = `${pct(s.degradedLossRatio)}, ${s.degradedLatencyMs} ms, ${secs(s.degradedForMs)}, ${secs(s.pathWindowMs)}, ${s.minSamples}`;
  return [alt.name, options, ...cells];
}

function alternativesTable(r: Recording, paths: number): string {
  return table(
    ['Option set', 'Loss, p99, sustain, window, min samples', ...DETECTED],
    ALTERNATIVES.map((a) => alternativeRow(r, a, paths)),
  );
}

export function pathLossReport(r: Recording): string {
  const d = DEFAULT_PATH_DEGRADATION;
  const phases = table(
    [
      'Phase',
      'Probes',
      'Failed',
      'Latency p50 / p90 / p99 / max',
      `Answered ≥ ${RETRANSMITTED_MS} ms`,
      `Loss in a ${secs(d.pathWindowMs)} window: min / median / max`,
      `p99 in a ${secs(d.pathWindowMs)} window: min / median / max`,
    ],
    r.phases.map((p) => phaseRow(r, p, d.pathWindowMs)),
  );
  const events = timeline(r, d);
  return [
    phases,
    'Degraded after (min / median / max from the onset), one path:',
    alternativesTable(r, 1),
    `Degraded after, a node judged on its ${NODE_PATHS} paths merged:`,
    alternativesTable(r, NODE_PATHS),
    `Replayed in order with the defaults: ${events.length ? events.join('; ') : 'no transition'}.`,
  ].join('\n\n');
}
