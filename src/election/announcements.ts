// What a coordinator's announcements carry, peer by peer: its term state (for peers of this
// protocol, and without what is new for protocol 1), or in a large mesh a thin heartbeat to the
// peers not next in line; built once and reused, the same bytes, while nothing in it changed.
import type { Alert } from '../wire/alert.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { Announcement } from '../wire/peer-messages.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';
import { PROTOCOL } from '../wire/protocol.js';
import { alertsFor, undeliveredFor } from './compat.js';
import type { ElectionDelegate, TermState } from './delegate.js';

/** The term state an announcement, or a refusal handing a newer term over, carries. */
export function termStateOf(m: {
  peers: TermState['peers'];
  undelivered?: TermState['undelivered'];
  alerts?: Alert[];
  cannot_judge?: PeerStatusPayload;
}): TermState {
  return {
    peers: m.peers,
    undelivered: m.undelivered ?? [],
    alerts: m.alerts ?? [],
    cannotJudge: m.cannot_judge ?? null,
  };
}

/**
 * The announcement with the verdicts, for peers of each protocol: index p for protocol p (1 up to
 * PROTOCOL), index 0 unused.
 */
type FullAnnouncements = readonly Announcement[];

/** At most this many firing alerts ride on an announcement (the newest). */
const MAX_SHARED_ALERTS = 500;

export function alertsToShare(alerts: Alert[]): { alerts?: Alert[] } {
  if (alerts.length === 0) return {};
  return { alerts: alerts.slice(-MAX_SHARED_ALERTS) };
}

export class Announcements {
  /** The last announcements with verdicts, and what they were built from (full). */
  private lastFull: {
    peers: TermState['peers'];
    key: string;
    announcements: FullAnnouncements;
  } | null = null;

  constructor(
    private readonly o: {
      self: NodeRef;
      delegate: Pick<ElectionDelegate, 'localState' | 'windows'>;
      /** The peer protocol each peer's last answer named; default 1 (what f6578aa takes). */
      protocolOf?: (address: string) => number;
    },
  ) {}

  /**
   * The announcement for each peer: the full one (as a node of its protocol takes it; protocol 1
   * to one that has not said), or in a large mesh a thin one to non-successors.
   * `thinHeartbeatMs`: a large mesh's, whose peers other than the successors get no verdicts and
   * are told how often they hear from the coordinator; null: every peer gets them.
   */
  forPeers(
    epoch: number,
    successors: readonly string[],
    thinHeartbeatMs: number | null,
  ): (address: string) => Announcement {
    const windows = this.o.delegate.windows();
    const common = {
      from: this.o.self,
      epoch,
      ...(windows.length > 0 ? { maintenance: windows } : {}),
      successors: [...successors],
    };
    const byProtocol = this.full(common);
    const full = (address: string) => {
      const protocol = this.o.protocolOf?.(address) ?? 1;
      return byProtocol[Math.max(1, Math.min(PROTOCOL, protocol))]!;
    };
    if (thinHeartbeatMs === null) return full;
    const thin: Announcement = {
      ...common,
      peers: [],
      peers_omitted: true,
      heartbeat_ms: thinHeartbeatMs,
    };
    const inLine = new Set(successors);
    return (address) => (inLine.has(address) ? full(address) : thin);
  }

  /**
   * The announcement with the verdicts: the last one again, the same object (so the same bytes,
   * serialized once), while the delegate's `localState().peers` is the same array and nothing else in it changed. A
   * large mesh's successors get it at every heartbeat: 2 MB of JSON at 5,000 peers.
   */
  private full(common: Omit<Announcement, 'peers'>): FullAnnouncements {
    const { peers, undelivered, alerts, cannotJudge } = this.o.delegate.localState();
    const rest = {
      ...common,
      undelivered,
      ...alertsToShare(alerts),
      ...(cannotJudge ? { cannot_judge: cannotJudge } : {}),
    };
    const key = JSON.stringify(rest);
    const last = this.lastFull;
    if (last && last.peers === peers && last.key === key) return last.announcements;
    const current: Announcement = { ...rest, peers };
    // A node of an older protocol refuses what it does not know: the same, without it (the same
    // object when there is nothing to leave out).
    const olderFor = (protocol: number, base: Announcement): Announcement => {
      const older = undeliveredFor(protocol, undelivered);
      const olderAlerts = alertsFor(protocol, alerts);
      const judge = protocol >= 2 && cannotJudge ? { cannot_judge: cannotJudge } : {};
      return (!judge.cannot_judge && cannotJudge) || older !== undelivered || olderAlerts !== alerts
        ? { ...common, undelivered: older, ...alertsToShare(olderAlerts), ...judge, peers }
        : base;
    };
    const announcements: Announcement[] = [];
    announcements[PROTOCOL] = current;
    for (let p = PROTOCOL - 1; p >= 1; p--) announcements[p] = olderFor(p, announcements[p + 1]!);
    this.lastFull = { peers, key, announcements };
    return announcements;
  }
}
