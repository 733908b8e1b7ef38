// Turns the mesh's log lines and the receiver's webhooks into the demo's readable, timestamped lines.
import type { ReceivedWebhook, Receiver } from './webhook-sink.js';
import { CoordinatorViews, type ViewNote } from './coordinator-views.js';
import type { LocalMesh, LogLine, MeshNode } from './mesh.js';
import { Deliveries } from './deliveries.js';
import { clusterStatusOf, peerStatusOf } from './received-webhooks.js';
import { statusPageUrl } from './status-page.js';
import { seconds, type Colour, type Printer } from './terminal-style.js';
import { describeWebhook } from './webhook-lines.js';

type Health = 'alive' | 'suspect' | 'dead' | 'unknown';

export interface NarratorOptions {
  /** Show each peer-status event's dedup key (`knh demo --show-keys`). */
  showKeys?: boolean;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

export class Narrator {
  readonly views: CoordinatorViews;
  /** Webhooks whose payload failed its schema. */
  readonly badWebhooks: ReceivedWebhook[] = [];
  /** The latest verdict on each peer, as told by whichever node leads (a successor inherits it). */
  private readonly health = new Map<string, Health>();
  private readonly deliveries = new Deliveries();
  private readonly ticker: NodeJS.Timeout;
  private muted = false;

  constructor(
    private readonly mesh: LocalMesh,
    private readonly receiver: Receiver,
    private readonly out: Printer,
    private readonly options: NarratorOptions = {},
  ) {
    this.views = new CoordinatorViews((n) => mesh.node(n).address);
    mesh.on('log', this.onLog);
    mesh.on('exit', this.onExit);
    mesh.on('stderr', this.onStderr);
    receiver.on('webhook', this.onWebhook);
    this.ticker = setInterval(() => this.notes(this.views.tick(Date.now())), 500);
    this.ticker.unref();
  }

  say(tag: string, text: string, colour?: Colour): void {
    this.out.line(tag, text, colour);
  }

  /** Stops printing what the nodes and the receiver do (shutting down: their exits are expected). */
  mute(): void {
    this.muted = true;
  }

  close(): void {
    this.mute();
    clearInterval(this.ticker);
    this.mesh.off('log', this.onLog);
    this.mesh.off('exit', this.onExit);
    this.mesh.off('stderr', this.onStderr);
    this.receiver.off('webhook', this.onWebhook);
  }

  nameOf(address: string | null): string {
    if (address === null) return 'none';
    return this.mesh.byAddress(address)?.name ?? address;
  }

  private readonly onLog = (node: MeshNode, line: LogLine): void => {
    const now = Date.now();
    switch (line.event) {
      case 'listening':
        this.print(
          'node',
          `${node.name} started on ${node.address} (pid ${node.process?.pid ?? '?'}), status page ${statusPageUrl(line, node)}`,
          'green',
        );
        this.notes(this.views.started(node.index, now));
        return;
      case 'coordinator-changed':
        this.notes(
          this.views.changed(node.index, str(line.coordinatorAddress), num(line.epoch), now),
        );
        return;
      case 'election-started':
        this.notes(this.views.electionStarted(node.index, str(line.reason) ?? '?', now));
        return;
      case 'round':
        this.round(node, line);
        return;
      case 'peer-dead':
      case 'peer-recovered':
      case 'peer-alive':
      case 'peer-never-alive': {
        const peer = str(line.peerAddress);
        const health =
          line.event === 'peer-alive' || line.event === 'peer-recovered' ? 'alive' : 'dead';
        if (peer) this.health.set(peer, health);
        if (line.event === 'peer-never-alive') {
          const why = str(line.reason) ?? '?';
          this.print(
            'warn',
            `${node.name}: ${this.nameOf(peer)} has not answered since discovered (${why}); no alert until seen alive`,
            'yellow',
          );
        }
        return;
      }
    }
    // Other warnings and errors as they are (events above have their own lines or webhooks).
    if (line.level >= 40) {
      const error = line.level >= 50;
      const detail = str(line.detail) ?? str(line.reason);
      this.print(
        error ? 'ERROR' : 'warn',
        `${node.name}: ${line.msg}${detail ? ` (${detail})` : ''}`,
        error ? 'red' : 'yellow',
      );
    }
  };

  private readonly onExit = (
    node: MeshNode,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): void => {
    const crashed = signal === null && code !== 0;
    this.print(
      'node',
      `${node.name} stopped (${signal ?? `exit code ${code ?? '?'}`})`,
      crashed ? 'red' : 'yellow',
    );
    this.notes(this.views.stopped(node.index, Date.now()));
  };

  private readonly onStderr = (node: MeshNode, text: string): void => {
    for (const l of text.split('\n').filter((t) => t.trim()))
      this.print('stderr', `${node.name}: ${l}`, 'red');
  };

  private readonly onWebhook = (w: ReceivedWebhook): void => {
    const cluster = clusterStatusOf(w);
    if (cluster) for (const p of cluster.peer_map) this.health.set(p.address, p.health);
    const peer = peerStatusOf(w);
    const delivery = peer ? this.deliveries.note(peer.dedup_key, w.receivedMs) : undefined;
    const line = describeWebhook(w, { showKeys: this.options.showKeys ?? false, delivery });
    if (line.bad) this.badWebhooks.push(w);
    this.print(line.bad ? 'WEBHOOK!!' : 'WEBHOOK', line.text, line.colour);
  };

  /** A compact line per round, only from the node the mesh agrees leads (or that believes it does). */
  private round(node: MeshNode, line: LogLine): void {
    const leader = this.views.coordinator ?? this.views.viewOf(node.index);
    if (leader !== node.address) return;
    const peers = this.mesh.nodes.filter((n) => n !== node);
    const by = (h: Health) => peers.filter((p) => (this.health.get(p.address) ?? 'unknown') === h);
    const alive = by('alive');
    const verdicts =
      alive.length === peers.length
        ? `all alive`
        : [
            `${alive.length} alive`,
            by('suspect').length > 0
              ? `suspect: ${by('suspect')
                  .map((p) => p.name)
                  .join(', ')}`
              : '',
            by('dead').length > 0
              ? `dead: ${by('dead')
                  .map((p) => p.name)
                  .join(', ')}`
              : '',
            by('unknown').length > 0
              ? `not yet judged: ${by('unknown')
                  .map((p) => p.name)
                  .join(', ')}`
              : '',
          ]
            .filter(Boolean)
            .join(', ');
    const changed = [
      num(line.changed) > 0 ? `, ${num(line.changed)} changed` : '',
      num(line.membership) > 0 ? `, ${num(line.membership)} joined or left` : '',
    ].join('');
    const sanity = line.sanity === 'failed' ? ', SANITY CHECK FAILED' : '';
    this.print(
      'round',
      `round ${num(line.round)} by ${node.name}: ${num(line.probed)} probed, ${verdicts}${changed}${sanity}, ${seconds(num(line.durationMs))}`,
      'dim',
    );
  }

  private notes(notes: ViewNote[]): void {
    for (const note of notes) {
      switch (note.kind) {
        case 'election':
          this.print(
            'ELECTION',
            `${this.mesh.node(note.node).name} holds an election (${note.reason})`,
            'magenta',
          );
          break;
        case 'agreed': {
          const who = this.nameOf(note.coordinator);
          const after = note.afterMs === null ? '' : `, settled in ${seconds(note.afterMs)}`;
          const all =
            note.nodes === 1 ? 'the only running node' : `all ${note.nodes} running nodes`;
          this.print(
            'LEADER',
            note.same
              ? `${all} ${note.nodes === 1 ? 'follows' : 'follow'} ${who} again (epoch ${note.epoch})`
              : `${all} ${note.nodes === 1 ? 'agrees' : 'agree'}: coordinator ${who}, epoch ${note.epoch}${after}`,
            'cyan',
          );
          break;
        }
        case 'lost':
          this.print(
            'LEADER',
            `coordinator ${this.nameOf(note.coordinator)} is gone; its followers hold an election once it has been silent for COORDINATOR_TIMEOUT`,
            'yellow',
          );
          break;
        case 'split': {
          const views = [...note.views].map(
            ([n, c]) => `${this.mesh.node(n).name}→${this.nameOf(c)}`,
          );
          this.print('LEADER', `no agreement yet: ${views.join(', ')}`, 'yellow');
          break;
        }
      }
    }
  }

  private print(tag: string, text: string, colour?: Colour): void {
    if (!this.muted) this.out.line(tag, text, colour);
  }
}
