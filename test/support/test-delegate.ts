// An election delegate for the driver's tests: the local state from the test's functions (empty by
// default), a followed term remembered as a node remembers it, every merge reported to the test.
import type { ElectionDelegate, TermState } from '../../src/election/delegate.js';
import { TermMemory } from '../../src/election/term-memory.js';
import type { Alert } from '../../src/wire/alert.js';
import type { MaintenanceWindow } from '../../src/wire/maintenance-window.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type { PeerView } from '../../src/wire/peer-view.js';
import type { TermHandover } from '../../src/wire/term-handover.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';

export interface DelegateHooks {
  view?(): PeerView[];
  undelivered?(): PeerStatusPayload[];
  alerts?(): Alert[];
  cannotJudge?(): PeerStatusPayload | null;
  maintenance?(): MaintenanceWindow[];
  handover?(): TermHandover | null;
  onMaintenance?(windows: MaintenanceWindow[]): void;
  /** An accepted announcement's verdicts; null when they were left out (a large mesh). */
  onFollowedView?(views: PeerView[] | null): void;
  /** A newer term's state, handed over to this node while it leads. */
  onHandover?(
    views: PeerView[],
    undelivered: PeerStatusPayload[],
    cannotJudge: PeerStatusPayload | null,
  ): void;
  /** A term's hand-over the driver took, from the reply of the peer at `from`. */
  onTermHandover?(handover: TermHandover, from: string): void;
}

export class TestDelegate implements ElectionDelegate {
  readonly memory: TermMemory;
  /** The last coordinator followed, as the driver knows it (set once the driver exists). */
  leader: () => NodeRef | null = () => null;

  constructor(
    self: NodeRef,
    private readonly hooks: DelegateHooks = {},
  ) {
    this.memory = new TermMemory(self.address);
  }

  localState(): TermState {
    const h = this.hooks;
    return {
      peers: h.view?.() ?? [],
      undelivered: h.undelivered?.() ?? [],
      alerts: h.alerts?.() ?? [],
      cannotJudge: h.cannotJudge?.() ?? null,
    };
  }

  windows(): MaintenanceWindow[] {
    return this.hooks.maintenance?.() ?? [];
  }

  handover(): TermHandover | null {
    return this.hooks.handover?.() ?? null;
  }

  mergeWindows(windows: MaintenanceWindow[]): void {
    this.hooks.onMaintenance?.(windows);
  }

  mergeFollowed(state: TermState, peersOmitted: boolean): void {
    this.memory.follow(state, peersOmitted);
    this.hooks.onFollowedView?.(peersOmitted ? null : state.peers);
  }

  mergeSuperseded(state: TermState, leading: boolean): void {
    if (leading) this.hooks.onHandover?.(state.peers, state.undelivered, state.cannotJudge);
    else this.memory.takeOver(state);
  }

  mergeHandover(handover: TermHandover, from: string): void {
    this.hooks.onTermHandover?.(handover, from);
  }

  /** What the node would start a term from: the remembered verdicts, the last leader alive. */
  inherited(now: number): PeerView[] {
    return this.memory.inherited(now, this.leader());
  }
}
