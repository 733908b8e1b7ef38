// A new coordinator's alerts: those its predecessor shared that are still true here (a peer it also
// judges dead), and pair probing's findings (judged again here), are carried on, with their
// grouped pages; the rest are over (a peer it sees alive, a broken path from the predecessor
// itself). A peer inherited dead with no shared alert gets one
// rebuilt from its verdict (same key: the incident's stem). Pure.
import { peerStatusPayload } from './payloads.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { PeerRecord } from '../prober/verdict.js';
import type { Alert } from '../wire/alert.js';
import { alertOf } from './lifecycle.js';
import { incidentOf } from '../wire/incident.js';

export function succession(args: {
  inherited: readonly Alert[];
  records: readonly PeerRecord[];
  /** Peer-status events the predecessor had not delivered (or held for maintenance). */
  undelivered: readonly PeerStatusPayload[];
  /** The "cannot judge" incident the predecessor left open, which the reporter resolves. */
  cannotJudge?: PeerStatusPayload | null;
  /**
   * This node judges pair probing's findings: their alerts are carried on, to be resolved by
   * their incidents' closings (node/path-findings.ts); else they are over.
   */
  findingsJudged?: boolean;
  /** This node judges nodes out of sight: their alerts are carried on (node/auth-findings.ts). */
  authJudged?: boolean;
  self: NodeRef;
  epoch: number;
  now: number;
}): { carried: Alert[]; over: Alert[] } {
  const dead = new Set(args.records.filter((r) => r.health === 'dead').map((r) => r.address));
  // A "cannot judge" incident the reporter resolves (the one inherited open, or one whose can_judge
  // the predecessor left undelivered): its can_judge reaches these receivers too. Any other such
  // alert still firing here is over, resolved below, or it would fire for good.
  const judged = new Set(
    [
      ...(args.cannotJudge ? [args.cannotJudge] : []),
      ...args.undelivered.filter((p) => p.event === 'can_judge'),
    ].map(incidentOf),
  );
  // This node's own alert (it was reported dead and now leads) is resolved by its own recovery.
  const inherited = args.inherited.filter(
    (a) =>
      a.peer.address !== args.self.address && !(a.kind === 'cannot_judge' && judged.has(a.key)),
  );
  const carried = inherited.filter(
    (a) =>
      (a.kind === 'peer_dead' && dead.has(a.peer.address)) ||
      (a.kind === 'peer_unauthenticated'
        ? args.authJudged === true
        : args.findingsJudged === true && a.severity === 'warning'),
  );
  const over = inherited.filter((a) => !carried.includes(a));
  // Not yet sent anywhere: they come through the reporter when they go.
  const pending = new Set(
    args.undelivered.filter((p) => p.event === 'peer_dead').map((p) => p.peer.address),
  );
  const covered = new Set([...carried.map((a) => a.peer.address), ...pending]);
  for (const record of args.records) {
    if (record.health !== 'dead' || !record.alerted || covered.has(record.address)) continue;
    carried.push(
      alertOf(
        peerStatusPayload({
          record,
          event: 'peer_dead',
          incidentMs: record.sinceMs,
          coordinator: args.self,
          epoch: args.epoch,
          now: args.now,
        }),
      ),
    );
  }
  return { carried, over };
}
