// The findings a new coordinator takes over open: those whose alerts its predecessor shared still
// firing, and those whose opening it shared undelivered (the new coordinator sends it) without
// their closing. Each is tracked as open under the incident its predecessor opened, so that it is
// closed under that very key when it is over, or left open when the new coordinator finds it too.
import type { Alert } from '../wire/alert.js';
import { incidentOf, incidentStart, incidentSubjectOf } from '../wire/incident.js';
import {
  isFindingPayload,
  opensIncident,
  type FindingFacts,
  type PeerStatusPayload,
} from '../wire/webhooks.js';
import { findingOfSubject } from '../paths/finding-tracker.js';
import type { Finding } from '../paths/path-state.js';
import { alertOf } from './lifecycle.js';

export interface InheritedFinding {
  finding: Finding;
  /** When its problem started: its incident's identity. */
  startMs: number;
  /** Its alert, as shared, or as its opening makes it. */
  alert: Alert;
}

/** The open findings in what a predecessor shared; pure. */
export function inheritedFindings(
  alerts: readonly Alert[],
  undelivered: readonly PeerStatusPayload[],
): InheritedFinding[] {
  const closed = new Set(
    undelivered.filter((p) => isFindingPayload(p) && !opensIncident(p.event)).map(incidentOf),
  );
  const open = new Map<string, Alert>();
  for (const a of alerts) if (a.severity === 'warning') open.set(a.key, a);
  for (const p of undelivered) {
    if (!isFindingPayload(p) || !opensIncident(p.event)) continue;
    if (!open.has(incidentOf(p))) open.set(incidentOf(p), alertOf(p));
  }
  const found: InheritedFinding[] = [];
  for (const [key, alert] of open) {
    const facts: FindingFacts = alert.facts ?? {};
    if (closed.has(key)) continue;
    const finding = findingOfSubject(incidentSubjectOf(key), {
      ...(facts.partition ? { sides: facts.partition.sides } : {}),
      ...(facts.egress
        ? { reaches: facts.egress.reaches, reachedBy: facts.egress.reached_by }
        : {}),
      ...(facts.mtu ? { size: facts.mtu.size } : {}),
    });
    const startMs = incidentStart(key);
    if (finding && Number.isFinite(startMs)) found.push({ finding, startMs, alert });
  }
  return found;
}
