// Indirect probes, the coordinator's side: pick relays among the peers it reaches, ask each to
// probe a suspect peer for it (POST /probe), and collect who reached it.
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { PeerTransport } from '../core/transport.js';
import { evidenceOf, relayFailureReason } from '../core/evidence.js';
import type { PeerRecord } from './verdict.js';

/** A relay is asked to finish this long before the confirmation ends. */
export const RELAY_MARGIN_MS = 150;
/** Beyond the relay's own probing: the two hops to it and back. */
export const RELAY_HOP_MS = 250;

export interface IndirectProbeOptions {
  self: NodeRef;
  transport: Pick<PeerTransport, 'probeVia'>;
  clock: Clock;
  logger: Logger;
  random: () => number;
}

/** Random draws before pickRelays falls back to a scan: enough whenever most peers qualify. */
const DRAWS_PER_RELAY = 8;

/**
 * Up to `count` peers that this node reaches directly (alive, no broken path), at random. Draws
 * from `peers` first, so a confirmation among 5,000 peers looks at a few records, not all; when
 * draws find too few (most peers unreachable, or a small mesh), it picks among all that qualify.
 */
export function pickRelays(
  peers: readonly string[],
  record: (address: string) => PeerRecord | undefined,
  target: string,
  count: number,
  random: () => number,
): PeerRecord[] {
  if (count <= 0) return [];
  const qualifies = (r: PeerRecord | undefined): r is PeerRecord =>
    r !== undefined && r.address !== target && r.health === 'alive' && !r.brokenPath;
  const picked = new Map<string, PeerRecord>();
  for (let draw = 0; draw < count * DRAWS_PER_RELAY && picked.size < count; draw++) {
    const r = record(peers[Math.floor(random() * peers.length)] ?? '');
    if (qualifies(r)) picked.set(r.address, r);
  }
  if (picked.size === count) return [...picked.values()];
  const candidates = peers.map(record).filter(qualifies);
  for (let i = candidates.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [candidates[i], candidates[j]] = [candidates[j] as PeerRecord, candidates[i] as PeerRecord];
  }
  return candidates.slice(0, count);
}

/** What the relays saw of the target, as ids of the relays. */
export interface RelayFindings {
  /** They reached it. */
  reached: string[];
  /** Its host answered them with a refusal (its process is down, the path to it works). */
  refused: string[];
  /** They could not reach it either, through silence: they corroborate this node's view. */
  silent: string[];
}

/**
 * Asks every relay at once to probe `target`, each given until RELAY_MARGIN_MS before `deadline`;
 * resolves to what they saw. A relay that does not answer counts for nothing, either way. Never
 * throws.
 */
export async function probeThroughRelays(
  opts: IndirectProbeOptions,
  relays: readonly PeerRecord[],
  target: string,
  deadline: number,
  signal: AbortSignal,
): Promise<RelayFindings> {
  const findings: RelayFindings = { reached: [], refused: [], silent: [] };
  const ask = async (relay: PeerRecord): Promise<void> => {
    const timeoutMs = Math.max(50, deadline - opts.clock.now() - RELAY_MARGIN_MS);
    const outcome = await opts.transport.probeVia(
      relay.address,
      { from: opts.self, target, timeout_ms: Math.round(timeoutMs) },
      signal,
    );
    const log = { peerAddress: target, relay: relay.id };
    if (!outcome.ok) {
      opts.logger.debug({ ...log, reason: outcome.detail }, 'relay did not answer');
      return;
    }
    const { value } = outcome;
    opts.logger.debug(
      { ...log, reachable: value.reachable, detail: value.detail },
      'indirect probe',
    );
    if (value.reachable) return void findings.reached.push(relay.id);
    const reason = relayFailureReason(value);
    // A relay that cannot say how it failed corroborates nothing beyond silence.
    const evidence = reason ? evidenceOf(reason) : 'silence';
    findings[evidence === 'refusal' ? 'refused' : 'silent'].push(relay.id);
  };
  await Promise.all(relays.map(ask));
  return findings;
}
