// A peer's verdicts built through the real transitions of prober/verdict.ts (seen alive, its probes
// failing, the confirmation's outcome, answering again), so a test names only the moments its
// behaviour turns on and never a record the prober could not have reached.
import {
  answered,
  attemptFailed,
  confirm,
  newRecord,
  type Judgement,
  type PeerRecord,
  type Withhold,
} from '../../src/prober/verdict.js';

/** The unhealthy duration every builder here confirms with. */
export const UNHEALTHY_MS = 1_000;

/** Peer `id` (`name@ip`) at `address`, answering a probe at `at`: its first-alive judgement. */
export function alive(address: string, id: string, at: number, latencyMs = 1): Judgement {
  const nodeName = id.split('@')[0] ?? '';
  return answered(newRecord(address, at), { latencyMs, id, nodeName }, at);
}

/** Node `name` at `ip`:8080, seen alive at `at`. */
export function upRecord(name: string, ip: string, at: number): PeerRecord {
  return alive(`${ip}:8080`, `${name}@${ip}`, at).record;
}

/** The record answering again at `at`: recovered, its path restored, or its suspicion cleared. */
export function answersAgain(record: PeerRecord, at: number, latencyMs = 1): Judgement {
  return answered(record, { latencyMs, id: record.id, nodeName: record.nodeName }, at);
}

export interface Failing {
  /** What the failed attempt says (a payload's `reason`). */
  detail?: string;
  /** When the failed attempt ended; 1 ms after it started unless given. */
  endsAt?: number;
}

/** The record's probe starting at `failedAt` failed: suspect, if it was alive. */
export function failing(
  record: PeerRecord,
  failedAt: number,
  { detail = 'refused', endsAt = failedAt + 1 }: Failing = {},
): Judgement {
  return attemptFailed(record, { latencyMs: 1, detail }, failedAt, endsAt);
}

export interface Confirming extends Failing {
  /** Relays that reached the peer: its path is broken rather than the peer dead. */
  reachedBy?: string[];
  withhold?: Withhold;
  /** When the confirmation ends; UNHEALTHY_MS after `failedAt` unless given. */
  at?: number;
}

/**
 * The confirmation of a peer whose probes have failed since `failedAt`: dead (or never alive),
 * behind a broken path when relays reached it, or withheld.
 */
export function confirmed(
  record: PeerRecord,
  failedAt: number,
  { reachedBy = [], withhold = null, at = failedAt + UNHEALTHY_MS, ...attempt }: Confirming = {},
): { suspected: Judgement; verdict: Judgement } {
  const suspected = failing(record, failedAt, attempt);
  const verdict = confirm(suspected.record, { reachedBy, unhealthyMs: UNHEALTHY_MS, withhold }, at);
  return { suspected, verdict };
}

/** That peer's record once confirmed dead at `at` (probes failing from 1 s before). */
export function deadRecord(up: PeerRecord, at: number): PeerRecord {
  return confirmed(up, at - UNHEALTHY_MS).verdict.record;
}

/** That peer's record once silent to this node since `at` (suspect: not answering, not refusing). */
export function silentRecord(up: PeerRecord, at: number): PeerRecord {
  return failing(up, at - 1_000, { detail: 'timeout', endsAt: at }).record;
}
