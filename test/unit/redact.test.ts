// Receivers' secrets never reach the logs: a PagerDuty routing key, a Slack webhook's token.
import { expect } from 'chai';
import { redactBody } from '../../src/delivery/redact.js';
import { shownUrl } from '../../src/core/shown-url.js';
import { dryRunPoster } from '../../src/delivery/dry-run-poster.js';
import { CapturingLogger } from '../support/capturing-logger.js';

const KEY = 'R0123456789abcdef0123456789abcde';
const SLACK = 'https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX';

describe('redaction', () => {
  it('masks a routing key and keeps the rest of the body', () => {
    expect(redactBody({ routing_key: KEY, event_action: 'resolve', dedup_key: 'k' })).to.deep.equal(
      { routing_key: '[redacted]', event_action: 'resolve', dedup_key: 'k' },
    );
    const plain = [{ labels: { alertname: 'X' } }];
    expect(redactBody(plain)).to.equal(plain);
  });

  it('shows only the origin of a URL with a path or a query', () => {
    expect(shownUrl(SLACK)).to.equal('https://hooks.slack.com/…');
    expect(shownUrl('http://am:9093')).to.equal('http://am:9093');
    expect(shownUrl('http://x/?token=1')).to.equal('http://x/…');
  });

  it('a dry run logs the payload without the secrets', async () => {
    const logger = new CapturingLogger();
    await dryRunPoster(logger).post(SLACK, { routing_key: KEY, text: 'hello' }, 1_000);
    const logged = JSON.stringify(logger.records);
    expect(logged).to.include('hello');
    expect(logged).not.to.include(KEY);
    expect(logged).not.to.include('XXXXSECRETXXXX');
  });
});
