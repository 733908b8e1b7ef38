// POST /test-alert: from the pod itself only; says where the test went, or that nothing is set.
import { expect } from 'chai';
import express from 'express';
import { listen, type HttpServer } from '../../src/http/server.js';
import { testAlertRouter } from '../../src/http/routes/test-alert.js';
import { CapturingLogger } from '../support/capturing-logger.js';

describe('POST /test-alert', () => {
  let server: HttpServer | null = null;
  afterEach(async () => server?.close());

  async function post(send: () => string[], mayChange?: (remote: string | undefined) => boolean) {
    const app = express();
    app.use(
      testAlertRouter({ logger: new CapturingLogger(), send, ...(mayChange ? { mayChange } : {}) }),
    );
    server = await listen(app, '127.0.0.1', 0);
    return fetch(`http://127.0.0.1:${server.port}/test-alert`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
  }

  it('sends the test from loopback and names the receivers (202)', async () => {
    let sent = 0;
    const res = await post(() => (sent++, ['slack', 'pagerduty']));
    expect(res.status).to.equal(202);
    expect(await res.json()).to.deep.equal({ sent_to: ['slack', 'pagerduty'] });
    expect(sent).to.equal(1);
  });

  it('refuses (403) from outside the pod, sending nothing', async () => {
    let sent = 0;
    const res = await post(
      () => (sent++, ['slack']),
      () => false,
    );
    expect(res.status).to.equal(403);
    expect(sent).to.equal(0);
  });

  it('says 409 when no receiver is configured', async () => {
    const res = await post(() => []);
    expect(res.status).to.equal(409);
    expect(((await res.json()) as { error: string }).error).to.include('SLACK_WEBHOOK_URL');
  });
});
