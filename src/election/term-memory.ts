// What a node remembers of the last term it followed: where it starts from if it leads next.
import { nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import type { PeerView } from '../wire/peer-view.js';
import { emptyTermState, type TermState } from './delegate.js';

export class TermMemory {
  private last: TermState = emptyTermState();

  constructor(private readonly selfAddress: string) {}

  /**
   * The followed coordinator's announcement. One that left its verdicts out (a large mesh, this
   * node not next in line) leaves the open "cannot judge" incident as it was: it did not say.
   */
  follow(state: TermState, peersOmitted: boolean): void {
    this.last = peersOmitted ? { ...state, cannotJudge: this.last.cannotJudge } : state;
  }

  /** A newer term's state, handed over in a refusal: what this node starts its term from. */
  takeOver(state: TermState): void {
    this.last = state;
  }

  /**
   * A coordinator stepping down keeps its own latest verdicts as what it would start from, should
   * it lead again before any other coordinator has told it newer ones; events it handed on are
   * not handed on again.
   */
  keepOwnView(view: PeerView[]): void {
    this.last = { ...this.last, peers: view, undelivered: [], cannotJudge: null };
  }

  /** The remembered verdicts (this node left out), plus `leader`, the last followed, alive. */
  inherited(now: number, leader: NodeRef | null): PeerView[] {
    const views = this.last.peers.filter((v) => v.address !== this.selfAddress);
    if (!leader || views.some((v) => v.address === leader.address)) return views;
    return [
      ...views,
      {
        id: leader.id,
        address: leader.address,
        node_name: nodeNameOf(leader.id),
        health: 'alive',
        since: now,
        alerted: false,
      },
    ];
  }

  /** This node as the last followed coordinator's view had it (dead, if it was reported dead). */
  inheritedSelf(): PeerView | null {
    return this.last.peers.find((v) => v.address === this.selfAddress) ?? null;
  }

  get alerts(): TermState['alerts'] {
    return this.last.alerts;
  }

  get undelivered(): TermState['undelivered'] {
    return this.last.undelivered;
  }

  get cannotJudge(): TermState['cannotJudge'] {
    return this.last.cannotJudge;
  }
}
