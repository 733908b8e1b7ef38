// The demo's one line per webhook: a flapping peer (or path) is told apart from a recovery.
import { expect } from 'chai';
import { describeWebhook } from '../../src/demo/webhook-lines.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import { deathAndRecovery } from '../support/alerts.js';
import { upRecord } from '../support/verdicts.js';

const received = (body: PeerStatusPayload) => ({
  path: '/peer-status',
  kind: 'peer-status' as const,
  body,
  receivedMs: 0,
  headers: {},
  errors: [],
});

describe('describeWebhook (the demo)', () => {
  const [dead, recovered] = deathAndRecovery(upRecord('a', '10.0.0.1', 1), 2_000, 5_000);

  it('shows a peer_flapping in yellow with its reason, not as a recovery', () => {
    const flapping: PeerStatusPayload = {
      ...recovered,
      event: 'peer_flapping',
      reason: 'a@10.0.0.1 went down and up 4 times in 9 s',
    };
    const line = describeWebhook(received(flapping));
    expect(line.colour).to.equal('yellow');
    expect(line.text).to.contain('reason: a@10.0.0.1 went down and up 4 times in 9 s');
  });

  it('shows a death in red with its reason, a recovery in green', () => {
    expect(describeWebhook(received(dead)).colour).to.equal('red');
    expect(describeWebhook(received(recovered)).colour).to.equal('green');
  });
});
