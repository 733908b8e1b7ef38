// Which coordinator each running node follows, summarised as the mesh agreeing or being in transition.
//
// Fed from the nodes' log lines; pure bookkeeping (no I/O, time passed in), so the demo can print
// one line when all running nodes agree instead of one line per node per change.

export type ViewNote =
  /** The first election held since the mesh last agreed. */
  | { kind: 'election'; node: number; reason: string }
  /** Every running node follows `coordinator`, itself running; `same`: as at the last agreement. */
  | {
      kind: 'agreed';
      coordinator: string;
      epoch: number;
      nodes: number;
      afterMs: number | null;
      same: boolean;
    }
  /** The agreed coordinator stopped running. */
  | { kind: 'lost'; coordinator: string }
  /** No agreement for a while: who follows whom (null: nobody). */
  | { kind: 'split'; views: ReadonlyMap<number, string | null> };

interface NodeView {
  coordinator: string | null;
  epoch: number;
}

interface Agreement {
  coordinator: string;
  epoch: number;
}

export class CoordinatorViews {
  /** Running nodes by index; null until the node has logged a view. */
  private readonly running = new Map<number, NodeView | null>();
  private agreed: Agreement | null = null;
  private lastAgreed: Agreement | null = null;
  private unsettledSince: number | null = null;
  private electionNoted = false;
  private splitNoted = false;

  constructor(
    private readonly addressOf: (node: number) => string,
    private readonly splitAfterMs = 5_000,
  ) {}

  /** The coordinator all running nodes follow, if they agree. */
  get coordinator(): string | null {
    return this.agreed?.coordinator ?? null;
  }

  /** The address node `node` follows, or null. */
  viewOf(node: number): string | null {
    return this.running.get(node)?.coordinator ?? null;
  }

  /** The agreed coordinator, else the one most running nodes follow. */
  likelyCoordinator(): string | null {
    if (this.agreed) return this.agreed.coordinator;
    const votes = new Map<string, number>();
    for (const view of this.running.values()) {
      if (view?.coordinator) votes.set(view.coordinator, (votes.get(view.coordinator) ?? 0) + 1);
    }
    return [...votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  }

  started(node: number, now: number): ViewNote[] {
    this.running.set(node, null);
    return this.evaluate(now);
  }

  stopped(node: number, now: number): ViewNote[] {
    this.running.delete(node);
    return this.evaluate(now);
  }

  electionStarted(node: number, reason: string, now: number): ViewNote[] {
    const notes = this.evaluate(now);
    if (this.electionNoted || !this.running.has(node)) return notes;
    this.electionNoted = true;
    return [...notes, { kind: 'election', node, reason }];
  }

  changed(node: number, coordinator: string | null, epoch: number, now: number): ViewNote[] {
    if (!this.running.has(node)) return [];
    this.running.set(node, { coordinator, epoch });
    return this.evaluate(now);
  }

  /** Call now and then: reports a transition that has not settled within `splitAfterMs`. */
  tick(now: number): ViewNote[] {
    if (this.agreed || this.splitNoted || this.unsettledSince === null) return [];
    if (now - this.unsettledSince < this.splitAfterMs || this.running.size === 0) return [];
    this.splitNoted = true;
    const views = new Map([...this.running].map(([n, v]) => [n, v?.coordinator ?? null]));
    return [{ kind: 'split', views }];
  }

  private agreement(): Agreement | null {
    const views = [...this.running.values()];
    const first = views[0]?.coordinator;
    if (!first || views.some((v) => v?.coordinator !== first)) return null;
    const leaderRunning = [...this.running.keys()].some((n) => this.addressOf(n) === first);
    if (!leaderRunning) return null;
    return { coordinator: first, epoch: Math.max(...views.map((v) => v?.epoch ?? 0)) };
  }

  private evaluate(now: number): ViewNote[] {
    const next = this.agreement();
    const previous = this.agreed;
    this.agreed = next;
    if (!next) {
      this.unsettledSince ??= now;
      const lostLeader =
        previous !== null &&
        ![...this.running.keys()].some((n) => this.addressOf(n) === previous.coordinator);
      return lostLeader ? [{ kind: 'lost', coordinator: previous.coordinator }] : [];
    }
    if (previous?.coordinator === next.coordinator) return [];
    const note: ViewNote = {
      kind: 'agreed',
      coordinator: next.coordinator,
      epoch: next.epoch,
      nodes: this.running.size,
      afterMs: this.unsettledSince === null ? null : now - this.unsettledSince,
      same: this.lastAgreed?.coordinator === next.coordinator,
    };
    this.lastAgreed = next;
    this.unsettledSince = null;
    this.electionNoted = false;
    this.splitNoted = false;
    return [note];
  }
}
