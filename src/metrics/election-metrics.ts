// Prometheus metrics of the bully election: elections held, coordinator changes, the current term,
// hand-overs refused.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { NodeRef } from '../wire/node-ref.js';
import type { Role } from '../election/bully.js';
import { HANDOVER_REFUSALS, type HandoverRefusal } from '../election/predecessors.js';

/** What the election driver shows of its state (the driver itself satisfies it). */
export interface ElectionState {
  readonly epoch: number;
  readonly role: Role;
  /** The role it claims to others: a coordinator not confirmed by any peer says candidate. */
  readonly claimedRole: Role;
  readonly coordinator: NodeRef | null;
}

export class ElectionMetrics {
  private readonly elections: Counter;
  private readonly changes: Counter;
  private readonly handoversRefused: Counter<'reason'>;

  constructor(registry: Registry, state: () => ElectionState) {
    this.elections = new Counter({
      name: 'knh_elections_total',
      help: 'Elections this node held: rounds asking its higher-ranked peers whether one is alive (the highest-ranked node takes over without one).',
      registers: [registry],
    });
    this.changes = new Counter({
      name: 'knh_coordinator_changes_total',
      help: 'Changes of the coordinator this node follows or is, to no coordinator included.',
      registers: [registry],
    });
    this.handoversRefused = new Counter({
      name: 'knh_handovers_refused_total',
      help: "Replies to this node's announcements whose term hand-over it refused, by reason: not-predecessor (the sender is no coordinator this node followed, or that refusals of its announcement named), newer-term (it names a term newer than this node's). Only hand-overs that carry events or keys count; a refused one comes again in each reply for a minute.",
      labelNames: ['reason'],
      registers: [registry],
    });
    for (const reason of HANDOVER_REFUSALS) this.handoversRefused.inc({ reason }, 0);
    new Gauge({
      name: 'knh_epoch',
      help: "The election term this node knows: the current coordinator's epoch.",
      registers: [registry],
      collect() {
        this.set(state().epoch);
      },
    });
    new Gauge({
      name: 'knh_is_coordinator',
      help: '1 while this node is the coordinator and its term is confirmed (a peer took its announcement), else 0.',
      registers: [registry],
      collect() {
        this.set(state().claimedRole === 'coordinator' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'knh_coordinator_info',
      help: 'Always 1: the coordinator this node follows or is, by id and address; no series while there is none.',
      labelNames: ['id', 'address'],
      registers: [registry],
      collect() {
        this.reset(); // one series: the previous coordinator's goes
        const c = state().coordinator;
        if (c) this.set({ id: c.id, address: c.address }, 1);
      },
    });
  }

  electionStarted(): void {
    this.elections.inc();
  }

  coordinatorChanged(): void {
    this.changes.inc();
  }

  handoverRefused(reason: HandoverRefusal): void {
    this.handoversRefused.inc({ reason });
  }
}
