// Peer-status events become alerts with a lifecycle: one firing, one resolved, per problem. A peer
// that comes back is resolved only once it has stayed up for the hold-down; dying again within it
// continues the same alert, so a flapping peer pages once, not on every flap. Pure: time is given.
import { incidentStartOf } from './payloads.js';
import { incidentOf, incidentSubjectOf } from '../wire/incident.js';
import {
  isUpdateEvent,
  openingOf,
  opensIncident,
  type PeerStatusPayload,
} from '../wire/webhooks.js';
import type { Alert, AlertKind } from '../wire/alert.js';
import type { AlertChange } from './receiver-adapter.js';
import { withPodNames, type PodNameOf } from './pod-names.js';

/** The alert kind of the incident a peer-status event opens or resolves: its opening event. */
const kindOf = (event: PeerStatusPayload['event']): AlertKind => openingOf(event);

/**
 * What an alert is about, whichever incident: the peer, the path to it from the coordinator, or a
 * coordinator's view; a finding of every node's paths (a warning) is about its incident's subject
 * (a node, a path between two nodes, the mesh), whoever the coordinator.
 */
function subject(a: Pick<Alert, 'kind' | 'peer' | 'coordinator' | 'key' | 'severity'>): string {
  if (a.severity === 'warning') return `finding:${incidentSubjectOf(a.key)}`;
  if (a.kind === 'path_broken') return `path:${a.coordinator.address}->${a.peer.address}`;
  if (a.kind === 'cannot_judge') return `judge:${a.peer.address}`;
  return a.peer.address;
}

const subjectOf = (payload: PeerStatusPayload) => subject(alertOf(payload));

export function alertOf(payload: PeerStatusPayload): Alert {
  const key = incidentOf(payload);
  const { figures, mtu, egress, partition, auth } = payload;
  const facts = { figures, mtu, egress, partition, auth };
  const told = Object.entries(facts).filter(([, v]) => v !== undefined);
  return {
    key,
    kind: kindOf(payload.event),
    peer: { id: payload.peer.id, address: payload.peer.address, node_name: payload.peer.node_name },
    coordinator: { id: payload.coordinator, address: payload.coordinator_address },
    reason: clip(payload.reason ?? null),
    path: payload.path ?? null,
    ...(payload.judgement ? { judgement: payload.judgement } : {}),
    ...(payload.severity ? { severity: payload.severity } : {}),
    ...(told.length > 0 ? { facts: Object.fromEntries(told) } : {}),
    startsAt: incidentStartOf(payload) || Date.parse(payload.timestamp),
    endsAt: null,
  };
}

export class AlertLifecycle {
  /** Firing alerts by subject. */
  private readonly firing = new Map<string, Alert>();
  /** Alerts whose problem ended, waiting out the hold-down, by subject: since when it ended. */
  private readonly ending = new Map<string, number>();

  /** `podOf`: the pod at an address, where discovery knows it, named in the alerts it makes. */
  constructor(
    private readonly holdDownMs: number,
    private readonly podOf: PodNameOf = () => undefined,
  ) {}

  /** A peer-status event (as sent to KNH's webhook): the alert changes it makes now, if any. */
  onEvent(payload: PeerStatusPayload, now: number): AlertChange[] {
    // News of an alert firing (a peer flapping): no change; the hold-down damps it already.
    if (isUpdateEvent(payload.event)) return [];
    const subject = subjectOf(payload);
    if (opensIncident(payload.event)) {
      if (this.ending.delete(subject)) return []; // back down within the hold-down: same alert
      if (this.firing.has(subject)) return [];
      const alert = withPodNames(alertOf(payload), this.podOf);
      this.firing.set(subject, alert);
      return [{ type: 'firing', alert }];
    }
    const alert = this.firing.get(subject);
    if (!alert) {
      // Never seen firing here (it fired under another coordinator): resolve it by its own key.
      const resolved = withPodNames({ ...alertOf(payload), endsAt: now }, this.podOf);
      return [{ type: 'resolved', alert: resolved }];
    }
    if (this.holdDownMs <= 0) return this.resolve(subject, alert, now);
    // The hold-down counts from when the peer came back: a recovery RECOVERY_HOLD held back
    // (alerts/flap-damper.ts) has waited part of it already.
    const upSince = Date.parse(payload.peer.since);
    const from = payload.event === 'peer_recovered' && upSince <= now ? upSince : now;
    if (!this.ending.has(subject)) this.ending.set(subject, from);
    return [];
  }

  /** Resolutions whose hold-down is over. */
  tick(now: number): AlertChange[] {
    const out: AlertChange[] = [];
    for (const [subject, since] of this.ending) {
      if (now - since < this.holdDownMs) continue;
      const alert = this.firing.get(subject);
      this.ending.delete(subject);
      if (alert) out.push(...this.resolve(subject, alert, since));
    }
    return out;
  }

  /**
   * A new coordinator starts from the alerts still firing (no change: they fired already), naming
   * the pods an older version's left out.
   */
  adopt(alerts: readonly Alert[]): void {
    for (const a of alerts) {
      const about = subject(a);
      if (!this.firing.has(about)) this.firing.set(about, withPodNames(a, this.podOf));
    }
  }

  /** Records that these firing alerts went out together in group `key`. */
  markGroup(keys: ReadonlySet<string>, key: string): void {
    for (const [subject, alert] of this.firing) {
      if (keys.has(alert.key) && alert.group === undefined)
        this.firing.set(subject, { ...alert, group: key });
    }
  }

  /** Resolves the alerts with these keys now (their peers are gone). */
  drop(keys: ReadonlySet<string>, now: number): AlertChange[] {
    const out: AlertChange[] = [];
    for (const [subject, alert] of this.firing) {
      if (!keys.has(alert.key)) continue;
      this.ending.delete(subject);
      out.push(...this.resolve(subject, alert, now));
    }
    return out;
  }

  clear(): void {
    this.firing.clear();
    this.ending.clear();
  }

  /** Every alert firing now (those waiting out their hold-down included). */
  firingAlerts(): Alert[] {
    return [...this.firing.values()];
  }

  /** When the next hold-down ends, if one is running. */
  nextDue(): number | null {
    let next: number | null = null;
    for (const since of this.ending.values()) {
      const due = since + this.holdDownMs;
      if (next === null || due < next) next = due;
    }
    return next;
  }

  private resolve(subject: string, alert: Alert, endsAt: number): AlertChange[] {
    this.firing.delete(subject);
    return [{ type: 'resolved', alert: { ...alert, endsAt } }];
  }
}

/** schemas/alert.schema.json's bound on `reason`: an alert over it would fail every announcement. */
const REASON_MAX = 2_000;

function clip(reason: string | null): string | null {
  return reason !== null && reason.length > REASON_MAX
    ? `${reason.slice(0, REASON_MAX - 1)}…`
    : reason;
}
