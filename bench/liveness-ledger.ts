// When each node address was down, so every peer_dead webhook can be judged: a real death or a false alarm.
import type { LocalMesh, LogLine, MeshNode } from '../src/demo/mesh.js';
import type { PeerStatusPayload } from '../src/wire/webhooks.js';

interface Spell {
  from: number;
  /** null: still down. */
  to: number | null;
}

/**
 * An address is down from the moment the bench decides to kill it (or its process exits) until its
 * next process logs `listening`; before its first `listening` it has never been up.
 */
export class LivenessLedger {
  private readonly spells = new Map<string, Spell[]>();

  /**
   * @param windowMs the longest one probe with all its retries can take: a real death is judged
   *   at most this long after the peer was last down.
   */
  constructor(readonly windowMs: number) {}

  watch(mesh: LocalMesh): void {
    mesh.on('log', (node: MeshNode, line: LogLine) => {
      if (line.event === 'listening') this.up(node.address, Date.now());
    });
    mesh.on('exit', (node: MeshNode) => this.down(node.address, Date.now()));
  }

  down(address: string, at: number): void {
    const spells = this.spells.get(address) ?? [];
    const last = spells.at(-1);
    if (last && last.to === null) return;
    spells.push({ from: at, to: null });
    this.spells.set(address, spells);
  }

  up(address: string, at: number): void {
    const spells = this.spells.get(address) ?? [{ from: 0, to: null }];
    const last = spells.at(-1);
    if (last && last.to === null) last.to = at;
    this.spells.set(address, spells);
  }

  /** Whether the address was down at some moment in [fromMs, toMs]. */
  wasDown(address: string, fromMs: number, toMs: number): boolean {
    const spells = this.spells.get(address);
    if (!spells) return true; // never seen up
    return spells.some((s) => s.from <= toMs && (s.to === null || s.to >= fromMs));
  }

  /**
   * A peer_dead alert is false when the peer was up during the whole span of the probe that
   * condemned it, i.e. for `windowMs` before the verdict (the payload's timestamp).
   */
  isFalseAlarm(payload: PeerStatusPayload): boolean {
    if (payload.event !== 'peer_dead') return false;
    const judged = Date.parse(payload.timestamp);
    return !this.wasDown(payload.peer.address, judged - this.windowMs, judged);
  }
}
