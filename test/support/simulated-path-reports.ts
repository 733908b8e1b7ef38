// The path reports (POST /paths/report, protocol 3) that simulated peers send their coordinator, as
// real nodes send them: what each tells and how often by the real policy (src/paths/report-policy.ts),
// a full report to each new term's coordinator (a new coordinator's first reports from every node
// spread as the policy says), then a report with nothing new each refresh, all again when the coordinator
// asks (resync); signed as real nodes sign. Every path of a simulated peer works: what a healthy
// mesh costs its coordinator. The peers do not probe each other: that is no load on the coordinator.
import { request } from 'node:http';
import type { PeerAuth } from '../../src/auth/peer-auth.js';
import { AUTH_HEADER, signedPath } from '../../src/auth/signature.js';
import { reportPolicy } from '../../src/paths/report-policy.js';
import { compareRank, parseAddress, type NodeRef } from '../../src/wire/node-ref.js';
import type { PathReport, PathReportReply, ReportedPath } from '../../src/wire/peer-messages.js';
import { PROTOCOL, PROTOCOL_HEADER } from '../../src/wire/protocol.js';

/** A simulated peer as the reports see it. */
export interface ReportingPeer {
  ref: NodeRef;
  /** Answering (not dead or black-holed). */
  up(): boolean;
  /** The coordinator it follows now, and the term. */
  followed(): { coordinator: NodeRef | null; epoch: number };
  /** Signs its requests; null: authentication is off. */
  auth(): PeerAuth | null;
}

export interface PathReportStats {
  sent: number;
  accepted: number;
  /** Reports refused (accepted: false), failed or answered with another status. */
  failed: number;
  /** Those by why: `refused`, `HTTP <status>`, an error code. */
  failures: Record<string, number>;
  resyncs: number;
  /** Peers whose full report the coordinator took in its current term. */
  peersHeld: number;
}

interface Progress {
  /** `address epoch` of the term reported to. */
  term: string;
  seq: number;
  full: boolean;
  /** Its full report was taken this term. */
  held: boolean;
  nextMs: number;
  inFlight: boolean;
}

/** How often each peer looks whether a report is due. */
const TICK_MS = 250;
const TIMEOUT_MS = 5_000;

export class SimulatedPathReports {
  private readonly progress = new Map<string, Progress>();
  private readonly policies = new Map<string, ReturnType<typeof reportPolicy>>();
  private readonly ranked: string[];
  private timer: NodeJS.Timeout | null = null;
  private readonly stats = { sent: 0, accepted: 0, failed: 0, resyncs: 0 };
  private readonly failures = new Map<string, number>();

  /**
   * `peers`: the simulated peers; `nodes`: every node of the mesh (the real ones too), for each
   * peer's sample; `perRound`: PAIR_PROBES.
   */
  constructor(
    private readonly peers: readonly ReportingPeer[],
    nodes: readonly string[],
    private readonly perRound: number,
  ) {
    this.ranked = [...nodes].sort(compareRank);
  }

  start(): void {
    this.timer ??= setInterval(() => this.tick(), TICK_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  counts(): PathReportStats {
    let peersHeld = 0;
    for (const p of this.progress.values()) if (p.held) peersHeld++;
    return { ...this.stats, peersHeld, failures: Object.fromEntries(this.failures) };
  }

  private tick(): void {
    const now = Date.now();
    for (const peer of this.peers) {
      if (!peer.up()) continue;
      const { coordinator, epoch } = peer.followed();
      if (!coordinator) continue;
      const policy = this.policyOf(peer.ref.address);
      const term = `${coordinator.address} ${epoch}`;
      let p = this.progress.get(peer.ref.address);
      if (!p || p.term !== term) {
        p = {
          term,
          seq: p?.seq ?? 0,
          full: true,
          held: false,
          nextMs: now + Math.floor(Math.random() * policy.spreadMs),
          inFlight: false,
        };
        this.progress.set(peer.ref.address, p);
      }
      if (p.inFlight || now < p.nextMs) continue;
      const report: PathReport = {
        from: peer.ref,
        epoch,
        seq: p.seq++,
        full: p.full,
        paths: p.full ? this.pathsOf(peer.ref.address, policy.sample, policy.everyPath, now) : [],
      };
      p.inFlight = true;
      this.stats.sent++;
      void this.send(peer, coordinator.address, report).then((outcome) => {
        p.inFlight = false;
        const reply = typeof outcome === 'string' ? null : outcome;
        if (typeof outcome === 'string' || !outcome.accepted) {
          const why = typeof outcome === 'string' ? outcome : 'refused';
          this.failures.set(why, (this.failures.get(why) ?? 0) + 1);
        }
        if (reply?.accepted) {
          this.stats.accepted++;
          if (reply.resync) {
            this.stats.resyncs++;
            p.full = true;
            p.held = false;
            p.nextMs = Date.now() + policy.gapMs;
            return;
          }
          if (report.full) p.held = true;
          p.full = false;
          p.nextMs = Date.now() + policy.refreshMs;
          return;
        }
        this.stats.failed++;
        // As a real node: the seq moved on, so the coordinator asks for all when it hears again.
        p.nextMs = Date.now() + Math.max(policy.gapMs, 1_000);
      });
    }
  }

  /** The nodes never change here: each peer's policy is worked out once. */
  private policyOf(address: string) {
    let policy = this.policies.get(address);
    if (!policy) {
      policy = reportPolicy(address, this.ranked, this.perRound);
      this.policies.set(address, policy);
    }
    return policy;
  }

  /** Every path this peer tells: its sample (or all, in a small mesh), each working. */
  private pathsOf(
    self: string,
    sample: ReadonlySet<string>,
    everyPath: boolean,
    now: number,
  ): ReportedPath[] {
    const targets = everyPath ? this.ranked.filter((n) => n !== self) : [...sample];
    return targets.map((to) => ({
      to,
      state: 'ok',
      since: now,
      samples: 5,
      loss_ratio: 0,
      p50_ms: 0.4,
      p99_ms: 1.2,
    }));
  }

  private send(
    peer: ReportingPeer,
    to: string,
    report: PathReport,
  ): Promise<PathReportReply | string> {
    const target = parseAddress(to);
    if (!target) return Promise.resolve(`not an address: ${to}`);
    const body = Buffer.from(JSON.stringify(report));
    const auth = peer.auth();
    const signed = auth?.signRequest('POST', signedPath(to, '/paths/report'), body);
    return new Promise((resolve) => {
      const req = request({
        host: target.ip,
        port: target.port,
        method: 'POST',
        path: '/paths/report',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': String(body.length),
          [PROTOCOL_HEADER]: String(PROTOCOL),
          ...(signed ? { [AUTH_HEADER]: signed.header } : {}),
        },
        timeout: TIMEOUT_MS,
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => resolve(err.message));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200)
            return resolve(`HTTP ${res.statusCode}: ${text.slice(0, 80)}`);
          try {
            resolve(JSON.parse(text) as PathReportReply);
          } catch {
            resolve('answer is not JSON');
          }
        });
      });
      req.end(body);
    });
  }
}
