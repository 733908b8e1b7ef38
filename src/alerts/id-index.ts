// Telling apart two nodes that share an id (two pods given one NODE_NAME, say): which addresses
// answered with each id.
import { placeholderId, seenAlive, type PeerRecord } from '../prober/verdict.js';

/** Which addresses answered with each id, and each address's id. */
export class IdIndex {
  private readonly byId = new Map<string, Set<string>>();
  private readonly idOf = new Map<string, string>();

  constructor(records: readonly PeerRecord[]) {
    for (const r of records) this.set(r);
  }

  set(record: PeerRecord): void {
    const { address, id } = record;
    // Not an identity: the IP standing in for a name, or discovery's name for a node that has not
    // answered (a misnamed EndpointSlice must not make two nodes twins).
    if (id === placeholderId(address) || !seenAlive(record)) return;
    const before = this.idOf.get(address);
    if (before === id) return;
    if (before !== undefined) this.byId.get(before)?.delete(address);
    this.idOf.set(address, id);
    let addresses = this.byId.get(id);
    if (!addresses) this.byId.set(id, (addresses = new Set()));
    addresses.add(address);
  }

  /** An address other than `record`'s with its id. */
  other({ address, id }: PeerRecord): string | undefined {
    for (const a of this.byId.get(id) ?? []) if (a !== address) return a;
    return undefined;
  }
}
