// Prometheus metrics of failure detection: verdict transitions, peers by health, self-suspicion.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { SelfSuspicion } from '../prober/rounds.js';
import type { Health } from '../wire/peer-view.js';
import type { PeerRecord, Transition } from '../prober/verdict.js';

export interface DetectionSource {
  /** The coordinator's verdicts; empty on a follower. */
  records(): readonly PeerRecord[];
  /** Null on a follower. */
  selfSuspicion(): SelfSuspicion | null;
  /** The event loop's largest lag over the last 10 s, ms (health/event-loop-lag.ts). */
  eventLoopLagMs(): number;
}

const HEALTHS: readonly Health[] = ['unknown', 'alive', 'suspect', 'dead'];
/** Every kind of verdict change: each series exists from 0, so rate() sees the first one. */
const TRANSITIONS = Object.keys({
  died: true,
  recovered: true,
  'first-alive': true,
  'never-alive': true,
  suspected: true,
  cleared: true,
  withheld: true,
  'path-broken': true,
  'path-restored': true,
} satisfies Record<NonNullable<Transition>, true>);

export class DetectionMetrics {
  private readonly transitions: Counter<'transition'>;

  constructor(registry: Registry, source: DetectionSource) {
    this.transitions = new Counter({
      name: 'knh_peer_transitions_total',
      help: 'Verdict changes decided by this node as coordinator (died, recovered, suspected, cleared, withheld, path-broken, ...).',
      labelNames: ['transition'],
      registers: [registry],
    });
    for (const transition of TRANSITIONS) this.transitions.inc({ transition }, 0);
    new Gauge({
      name: 'knh_peers',
      help: "Peers by health in this node's verdicts (only while it leads).",
      labelNames: ['health'],
      registers: [registry],
      collect() {
        const counts = new Map<Health, number>(HEALTHS.map((h) => [h, 0]));
        for (const r of source.records()) counts.set(r.health, (counts.get(r.health) ?? 0) + 1);
        for (const [health, n] of counts) this.set({ health }, n);
      },
    });
    new Gauge({
      name: 'knh_self_suspect',
      help: '1 while most of the live peers this coordinator judges are silent to it (timeouts; a refusal does not count): it withholds their verdicts and says it cannot judge the mesh.',
      registers: [registry],
      collect() {
        this.set(source.selfSuspicion()?.suspect ? 1 : 0);
      },
    });
    new Gauge({
      name: 'knh_event_loop_lag_seconds',
      help: "How late the event loop ran at most over the last 10 s: how late knh's own lag timer fired (every 500 ms; every 50 ms while leading). What liveness and the coordinator's overload guard read; unlike nodejs_eventloop_lag_*, which include their 100 ms sampling period, 0 on an idle node.",
      registers: [registry],
      collect() {
        this.set(source.eventLoopLagMs() / 1000);
      },
    });
    new Gauge({
      name: 'knh_unreachable_peers',
      help: 'Live peers (not dead) this coordinator cannot reach now: suspect, or a broken path.',
      registers: [registry],
      collect() {
        this.set(source.selfSuspicion()?.unreachable ?? 0);
      },
    });
  }

  transition(transition: Transition): void {
    if (transition) this.transitions.inc({ transition });
  }
}
