// The coordinator asks the nodes whose path reports stopped coming for their paths (POST
// /paths/pull): a node that can open no connection to it (its egress cut) still answers one, and
// what it tells is what egress-broken is found on. At most MAX_ASKING at once; each node at most
// once in half the silence that makes it asked.
import type { Logger } from '../core/logger.js';
import type { PathTransport } from '../core/transport.js';
import type { PathBook } from '../paths/path-book.js';
import type { NodeRef } from '../wire/node-ref.js';
import { PATHS_PROTOCOL } from '../wire/protocol.js';

/** Nodes asked for their paths at once, at most. */
const MAX_ASKING = 4;

export class SilentReporters {
  /** Nodes asked this term, by address: when. */
  private readonly asked = new Map<string, number>();
  private asking = 0;

  constructor(
    private readonly o: {
      self: NodeRef;
      logger: Logger;
      transport: Pick<PathTransport, 'pullPaths'>;
      protocolOf: (address: string) => number;
      book: PathBook;
      /** Whether this node still leads `epoch`. */
      leads: (epoch: number) => boolean;
      now: () => number;
    },
  ) {}

  /** A new term: nobody asked yet. */
  clear(): void {
    this.asked.clear();
  }

  /**
   * Asks the live nodes among `nodes` (`listed`: the same, as a set) whose reports have not come
   * for `afterMs` (counted from `termStartMs` for those never heard this term).
   */
  ask(
    nodes: readonly string[],
    listed: ReadonlySet<string>,
    alive: (address: string) => boolean,
    {
      now,
      epoch,
      afterMs,
      termStartMs,
    }: { now: number; epoch: number; afterMs: number; termStartMs: number },
  ): void {
    for (const address of this.asked.keys()) if (!listed.has(address)) this.asked.delete(address);
    const self = this.o.self;
    for (const address of nodes) {
      if (this.asking >= MAX_ASKING) return;
      if (address === self.address || !alive(address)) continue;
      if (now - (this.o.book.heardMs(address) ?? termStartMs) < afterMs) continue;
      if (now - (this.asked.get(address) ?? -Infinity) < afterMs / 2) continue;
      if (this.o.protocolOf(address) < PATHS_PROTOCOL) continue;
      this.asked.set(address, now);
      this.asking++;
      void this.pull(address, epoch);
    }
  }

  private async pull(address: string, epoch: number): Promise<void> {
    const log = this.o.logger.child({ peerAddress: address, event: 'paths-asked' });
    const outcome = await this.o.transport.pullPaths(address, { from: this.o.self, epoch });
    this.asking--;
    if (!outcome.ok) {
      log.info(
        { reason: outcome.reason, detail: outcome.detail },
        `no path report from ${address} lately, and asking it for its paths failed`,
      );
      return;
    }
    const report = outcome.value;
    if (!this.o.leads(epoch) || report.from.address !== address || report.epoch !== epoch) return;
    log.debug({ paths: report.paths.length }, `no path report from ${address} lately: asked it`);
    this.o.book.take(report, this.o.now());
  }
}
