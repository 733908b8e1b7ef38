// Alerts and peer deaths as the receivers' tests need them, built one way.
import { CannotJudge, resolveInherited } from '../../src/alerts/cannot-judge.js';
import { peerStatusPayload } from '../../src/alerts/payloads.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type { PeerRecord } from '../../src/prober/verdict.js';
import type { Alert } from '../../src/wire/alert.js';
import type { AlertChange, AlertGroup } from '../../src/alerts/receiver-adapter.js';
import { alertOf } from '../../src/alerts/lifecycle.js';
import { findingPayload } from '../../src/alerts/finding-events.js';
import type { Finding } from '../../src/paths/path-state.js';
import type { WindowStats } from '../../src/paths/path-window.js';
import { answersAgain, confirmed, silentRecord, UNHEALTHY_MS, upRecord } from './verdicts.js';

export const COORDINATOR: NodeRef = { id: 'worker-1@10.0.0.1', address: '10.0.0.1:8080' };

/** Node `worker-<n>` at 10.0.0.<n>:8080, dead since `at`. */
export function deadAlert(
  n: number,
  at: number,
  over: Partial<Alert> = {},
  coordinator = COORDINATOR,
): Alert {
  return {
    key: `knh:10.0.0.${n}:8080:${at}`,
    kind: 'peer_dead',
    peer: { id: `worker-${n}@10.0.0.${n}`, address: `10.0.0.${n}:8080`, node_name: `worker-${n}` },
    coordinator,
    reason: 'timeout',
    path: null,
    startsAt: at,
    endsAt: null,
    ...over,
  };
}

/** worker-<n>'s path from COORDINATOR broken since `at`, reached by `witnesses` still. */
export function brokenPathAlert(
  n: number,
  at: number,
  {
    reason = 'refused',
    witnesses = ['worker-2@10.0.0.2'],
  }: { reason?: Alert['reason']; witnesses?: string[] } = {},
): Alert {
  return deadAlert(n, at, {
    key: `knh:${COORDINATOR.address}->10.0.0.${n}:8080:${at}`,
    kind: 'path_broken',
    reason,
    path: { from: COORDINATOR.id, to: `worker-${n}@10.0.0.${n}`, witnesses },
  });
}

export const firing = (alert: Alert): AlertChange => ({ type: 'firing', alert });

/** The alert resolved 2 min 5 s after it started. */
export const resolved = (alert: Alert): AlertChange => ({
  type: 'resolved',
  alert: { ...alert, endsAt: alert.startsAt + 125_000 },
});

/** The group a grouping window closing at `at` sends for `changes`: it fires what they fire. */
export function alertGroup(
  changes: AlertChange[],
  at: number,
  over: Partial<AlertGroup> = {},
): AlertGroup {
  return {
    key: changes[0]?.alert.key ?? `knh:test:${at}`,
    at,
    changes,
    firing: changes.filter((c) => c.type === 'firing').map((c) => c.alert),
    test: false,
    ...over,
  };
}

/** `up` confirmed dead at `at` (its probes failing from 1 s before). */
function death(up: PeerRecord, at: number): PeerRecord {
  const { verdict } = confirmed(up, at - UNHEALTHY_MS);
  if (verdict.transition !== 'died') throw new Error(`${up.id} did not die: ${verdict.transition}`);
  return verdict.record;
}

/** The peer_dead `coordinator` sends at `at` for that death. */
export function deadPayload(
  up: PeerRecord,
  at: number,
  { coordinator = COORDINATOR, epoch = 1 } = {},
): PeerStatusPayload {
  const record = death(up, at);
  return peerStatusPayload({
    record,
    event: 'peer_dead',
    incidentMs: at,
    coordinator,
    epoch,
    now: at,
  });
}

/** The peer_dead (at `at`) and peer_recovered (at `back`) KNH sends for a death. */
export function deathAndRecovery(
  up: PeerRecord,
  at: number,
  back: number,
  coordinator = COORDINATOR,
): [PeerStatusPayload, PeerStatusPayload] {
  const recovered = answersAgain(death(up, at), back).record;
  return [
    deadPayload(up, at, { coordinator }),
    peerStatusPayload({
      record: recovered,
      event: 'peer_recovered',
      incidentMs: at,
      coordinator,
      epoch: 1,
      now: back,
    }),
  ];
}

/** The `judgement` of cannotJudgeIncident's opening with its defaults (3 silent, one relay). */
export const INCIDENT_JUDGEMENT = {
  reaches: 1,
  peers: 4,
  unreachable: [3, 4, 5].map((n) => ({
    id: `worker-${n}@10.0.0.${n}`,
    address: `10.0.0.${n}:8080`,
    node_name: `worker-${n}`,
  })),
  unreachable_count: 3,
  corroborated_by: ['worker-2@10.0.0.2'],
};

/**
 * A cannot_judge incident of COORDINATOR (worker-1), as alerts made from KNH's events, built by the
 * coordinator's own code so the sentences are the ones it sends. Opened at `at`: it reaches
 * worker-2 but none of `silent` peers (worker-3, worker-4 …), and `corroboratedBy` cannot reach
 * them either. Resolved at `back` by worker-1 reaching every peer again, or by `successor` taking
 * over (reaching every peer but worker-1). `resolved` is the alert of the can_judge event, as a
 * coordinator that never saw it fire resolves it; one that did resolves the firing alert, ended.
 */
export function cannotJudgeIncident(
  at: number,
  back: number,
  {
    silent = 3,
    corroboratedBy = ['worker-2@10.0.0.2'],
    successor,
  }: { silent?: number; corroboratedBy?: string[]; successor?: NodeRef } = {},
): { opening: PeerStatusPayload; resolution: PeerStatusPayload; opened: Alert; resolved: Alert } {
  const peers = (now: number) =>
    Array.from({ length: silent + 1 }, (_, i) =>
      upRecord(`worker-${i + 2}`, `10.0.0.${i + 2}`, now),
    );
  const [reached, ...rest] = peers(at);
  const records = [...(reached ? [reached] : []), ...rest.map((r) => silentRecord(r, at))];
  const judge = new CannotJudge(COORDINATOR);
  const opening = judge.withheld(corroboratedBy, records, 1, at);
  if (!opening) throw new Error('cannot_judge did not open');
  const payload = successor
    ? resolveInherited(opening, {
        coordinator: successor,
        epoch: 2,
        now: back,
        records: peers(back).filter((r) => r.id !== successor.id),
      })
    : judge.judgingAgain(peers(back), 1, back);
  if (!payload) throw new Error('can_judge was not sent');
  return {
    opening,
    resolution: payload,
    opened: alertOf(opening),
    resolved: { ...alertOf(payload), endsAt: back },
  };
}

/** Node worker-<n>'s pod address (10.0.0.<n>:8080), as findings name nodes. */
export const podAddress = (n: number) => `10.0.0.${n}:8080`;

/** What a finding's node is called: worker-<n>@10.0.0.<n>, for the address 10.0.0.<n>:8080. */
function refOf(address: string): { id: string; node_name: string } {
  const ip = address.slice(0, address.lastIndexOf(':'));
  const n = ip.split('.').at(-1) ?? '';
  return { id: `worker-${n}@${ip}`, node_name: `worker-${n}` };
}

/** The figures of findingIncident's degraded findings: a quarter of 40 probes lost. */
export const FINDING_STATS: WindowStats = {
  samples: 40,
  failures: 10,
  lossRatio: 0.25,
  p50Ms: 12.34,
  p99Ms: 480,
};

/** The findings of every node's paths, one of each kind, about worker-3 (from worker-2). */
export const FINDINGS = {
  nodeDegraded: { kind: 'node-degraded', node: podAddress(3) },
  pathDegraded: { kind: 'path-degraded', from: podAddress(2), to: podAddress(3) },
  nodeMtu: { kind: 'node-mtu', node: podAddress(3), size: 1400 },
  pathMtu: { kind: 'path-mtu', from: podAddress(2), to: podAddress(3), size: 1400 },
  egressBroken: {
    kind: 'egress-broken',
    node: podAddress(3),
    reaches: [],
    reachedBy: [podAddress(2), podAddress(4)],
  },
  partition: {
    kind: 'partition',
    sides: [
      [podAddress(1), podAddress(2)],
      [podAddress(3), podAddress(4)],
    ],
  },
  pathBroken: {
    kind: 'path-broken',
    from: podAddress(2),
    to: podAddress(3),
    witnesses: [podAddress(4), podAddress(5)],
  },
} satisfies Record<string, Finding>;

/**
 * A finding's incident as alerts made from its events by the coordinator's own code
 * (findingPayload, then alertOf), so their sentences, keys and facts are the ones it sends:
 * opened at `at` by COORDINATOR (worker-1, or `coordinator`), resolved at `back`. `resolved` is
 * the closing event's own alert, as a coordinator that never saw it fire resolves it; one that
 * did resolves the firing alert, ended (`resolved(opened)`).
 */
export function findingIncident(
  finding: Finding,
  at: number,
  back: number,
  {
    coordinator = COORDINATOR,
    figures = FINDING_STATS,
  }: { coordinator?: NodeRef; figures?: WindowStats | null } = {},
): { opening: PeerStatusPayload; resolution: PeerStatusPayload; opened: Alert; resolved: Alert } {
  const event = (closing: boolean, now: number) =>
    findingPayload({
      finding: { id: 'f', opened: finding, latest: finding, openedMs: at },
      closing,
      startMs: at,
      coordinator,
      epoch: 1,
      now,
      refOf,
      figures,
    });
  const opening = event(false, at);
  const resolution = event(true, back);
  return {
    opening,
    resolution,
    opened: alertOf(opening),
    resolved: { ...alertOf(resolution), endsAt: back },
  };
}
