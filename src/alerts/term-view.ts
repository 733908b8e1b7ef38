// What the reporter and its cluster statuses read of the term this node leads.
import type { SelfSuspicion } from '../prober/rounds.js';
import type { PeerRecord } from '../prober/verdict.js';
import type { SanityState } from '../wire/webhooks.js';

/** What the reporter reads of the current leadership. */
export interface TermView {
  epoch(): number;
  records(): PeerRecord[];
  sanity(): SanityState;
  selfSuspicion(): SelfSuspicion;
}
