// An alert as the receivers other than KNH's webhooks see it, and as followers hold it for a
// successor (schemas/alert.schema.json).
import type { FindingFacts, JudgementFacts, OpeningEvent, Severity } from './webhooks.js';

/**
 * cannot_judge: the coordinator (`peer`) cannot reach most of its peers and withholds their
 * verdicts; `reason` says so in a sentence, `judgement` in figures.
 */
export type AlertKind = OpeningEvent;

export interface Alert {
  /** Stable identity across firing, resolution and coordinators: `knh:<subject>:<incident ms>`. */
  key: string;
  kind: AlertKind;
  /** `pod_name`: the peer's pod, where discovery names it (an EndpointSlice's targetRef). */
  peer: { id: string; address: string; node_name: string; pod_name?: string };
  /** The coordinator that decided it; `pod_name`: its pod (POD_NAME), where known. */
  coordinator: { id: string; address: string; pod_name?: string };
  /** Why the peer was judged down (the last failure), when known. */
  reason: string | null;
  /** Path alerts: who cannot reach whom, and who can. */
  path: { from: string; to: string; witnesses: string[] } | null;
  /** cannot_judge: what the coordinator could see when it said so. */
  judgement?: JudgementFacts;
  /** Findings of every node's paths (protocol 3): warning, the rest critical. */
  severity?: Severity;
  /** Findings: their figures, probe size, reach or sides, as the event said. */
  facts?: FindingFacts;
  /** Epoch ms the problem started. */
  startsAt: number;
  /** Epoch ms it ended; null while firing. */
  endsAt: number | null;
  /**
   * The key of the group it first fired in, when that group fired several alerts (one grouped
   * page). Shared with the followers, so a successor resolves the grouped page too.
   */
  group?: string;
  /** Shared by a coordinator before it was sent (still in the grouping window). */
  unsent?: boolean;
}
