// The coordinator's verdicts, one record per peer, with what is read of them often kept as they
// change rather than recounted over 5,000 records: the counts behind self-suspicion, and a version
// that changes whenever a view of them would show something else.
import {
  sameVerdict,
  silentNow,
  suspicionCounts,
  suspicionOf,
  unreachableNow,
  type PeerRecord,
  type SelfSuspicion,
} from './verdict.js';

export class RecordBook {
  private readonly records = new Map<string, PeerRecord>();
  /** selfSuspicion's counts over the records. */
  private readonly counts = { considered: 0, unreachable: 0, silent: 0 };
  private shown = 0;

  get(address: string): PeerRecord | undefined {
    return this.records.get(address);
  }

  has(address: string): boolean {
    return this.records.has(address);
  }

  addresses(): IterableIterator<string> {
    return this.records.keys();
  }

  entries(): IterableIterator<[string, PeerRecord]> {
    return this.records.entries();
  }

  put(address: string, record: PeerRecord): void {
    const before = this.records.get(address);
    if (before) this.count(before, -1);
    if (!before || !sameVerdict(before, record)) this.shown++;
    this.records.set(address, record);
    this.count(record, 1);
  }

  drop(address: string): void {
    const before = this.records.get(address);
    if (!before) return;
    this.count(before, -1);
    this.records.delete(address);
    this.shown++;
  }

  clear(): void {
    this.records.clear();
    this.shown++;
    this.counts.considered = 0;
    this.counts.unreachable = 0;
    this.counts.silent = 0;
  }

  /** Something else to show that is not a record: the peer list changed. */
  touch(): void {
    this.shown++;
  }

  /** Changes whenever the verdicts as a view shows them change (latencies aside). */
  get version(): number {
    return this.shown;
  }

  /** Whether the coordinator cannot reach most of its peers (and so alerts on none of them). */
  get selfSuspicion(): SelfSuspicion {
    return suspicionOf(this.counts);
  }

  private count(record: PeerRecord, sign: 1 | -1): void {
    if (!suspicionCounts(record)) return;
    this.counts.considered += sign;
    if (unreachableNow(record)) this.counts.unreachable += sign;
    if (silentNow(record)) this.counts.silent += sign;
  }
}
