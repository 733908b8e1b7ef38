// The node's HTTP API over a real socket: what peers and operators get back for every kind of request.
import { expect } from 'chai';
import type {
  Announcement,
  AnnouncementReply,
  ElectionAnswer,
  ElectionRequest,
  PathEcho,
  PathPull,
  PathReport,
  PathReportReply,
  PingResponse,
  RelayProbeRequest,
} from '../../src/wire/peer-messages.js';
import type { RelayAnswer } from '../../src/prober/relay.js';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { loadSchemas, type SchemaName } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { PROTOCOL } from '../../src/wire/protocol.js';

const self = { id: 'worker-3@127.0.0.1', address: '127.0.0.1:8080' };
// The tests' requests come from 127.0.0.1: a peer speaks only for its own IP.
const lower = { id: 'worker-1@127.0.0.1', address: '127.0.0.1:8079' };
const elsewhere = { id: 'worker-2@10.0.0.1', address: '10.0.0.1:8080' };
const schemas = loadSchemas();

const pingBody: PingResponse = {
  id: self.id,
  address: self.address,
  node_name: 'worker-3',
  role: 'coordinator',
  epoch: 4,
  coordinator: self,
};

/** Records what the routes pass on; answers as a coordinator unless told otherwise. */
class FakeApi implements NodeApi {
  elections: ElectionRequest[] = [];
  announcements: Announcement[] = [];
  /** The protocol each announcement's request named. */
  announcementProtocols: number[] = [];
  probes: RelayProbeRequest[] = [];
  probeAnswer: RelayAnswer = {
    status: 200,
    body: {
      target: '10.0.0.2:8080',
      reachable: true,
      attempts: 1,
      latency_ms: 3,
      id: 'w2@10.0.0.2',
    },
  };
  notTakingPart = false;
  broken = false;
  reports: PathReport[] = [];

  ping(): PingResponse {
    return pingBody;
  }

  election(request: ElectionRequest): ElectionAnswer | null {
    if (this.broken) throw new Error('boom: a bug in the handler');
    this.elections.push(request);
    if (this.notTakingPart) return null;
    return { type: 'answer', from: self, epoch: 4, coordinator: self };
  }

  announcement(announcement: Announcement, protocol: number): AnnouncementReply | null {
    this.announcements.push(announcement);
    this.announcementProtocols.push(protocol);
    if (this.notTakingPart) return null;
    return { accepted: false, reason: 'outranked', epoch: 4, coordinator: self };
  }

  probe(request: RelayProbeRequest): Promise<RelayAnswer> {
    this.probes.push(request);
    return Promise.resolve(this.probeAnswer);
  }

  echo(echo: PathEcho): PathEcho {
    return { from: self, payload: echo.payload };
  }

  pathPull(pull: PathPull): PathReport | null {
    if (pull.epoch !== 4) return null;
    return { from: self, epoch: 4, seq: 7, full: true, paths: [] };
  }

  pathReport(report: PathReport): PathReportReply {
    this.reports.push(report);
    return { accepted: true, resync: false };
  }

  metrics(): Promise<{ contentType: string; body: string }> {
    return Promise.resolve({
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      body: '# HELP knh_self_suspect x\n# TYPE knh_self_suspect gauge\nknh_self_suspect 0\n',
    });
  }
}

const BODY_LIMIT = 4 * 1024;

describe('HTTP app', () => {
  let server: HttpServer;
  let api: FakeApi;
  let logger: CapturingLogger;
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(url(path), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  /** Expects a JSON answer with `status` that matches `schema`; returns its body. */
  async function expectJson(res: Response, status: number, schema: SchemaName) {
    expect(res.status).to.equal(status);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    const body: unknown = await res.json();
    expect(schemas.check(schema, body), JSON.stringify(body)).to.deep.equal({ ok: true });
    return body;
  }

  before(async () => {
    api = new FakeApi();
    logger = new CapturingLogger();
    const app = buildApp({ api, schemas, logger, bodyLimitBytes: BODY_LIMIT });
    server = await listen(app, '127.0.0.1', 0);
  });

  beforeEach(() => {
    api.elections = [];
    api.announcements = [];
    api.announcementProtocols = [];
    api.probes = [];
    api.reports = [];
    api.probeAnswer = new FakeApi().probeAnswer;
    api.notTakingPart = false;
    api.broken = false;
  });

  after(async () => {
    await server.close();
  });

  it('GET /ping answers 200 with the ping body', async () => {
    const body = await expectJson(await fetch(url('/ping')), 200, 'ping-response');
    expect(body).to.deep.equal(pingBody);
  });

  it('POST /election with a valid request answers 200 with an election answer', async () => {
    const request: ElectionRequest = { from: lower, epoch: 2 };
    const body = await expectJson(
      await post('/election', JSON.stringify(request)),
      200,
      'election-answer',
    );
    expect(body).to.deep.include({ type: 'answer', from: self });
    expect(api.elections).to.deep.equal([request]);
  });

  it('refuses (403) election messages and announcements naming another IP than the sender’s, unseen by the node', async () => {
    const forged = [
      ['/election', { from: elsewhere, epoch: 2 }],
      ['/coordinator', { from: elsewhere, epoch: 9, peers: [] }],
    ] as const;
    for (const [path, body] of forged) {
      await expectJson(await post(path, JSON.stringify(body)), 403, 'error-response');
    }
    expect(api.elections).to.deep.equal([]);
    expect(api.announcements).to.deep.equal([]);
  });

  it('POST /coordinator with a valid announcement answers 200 with the reply', async () => {
    const announcement: Announcement = { from: lower, epoch: 1, peers: [] };
    const body = await expectJson(
      await post('/coordinator', JSON.stringify(announcement)),
      200,
      'announcement-reply',
    );
    expect(body).to.deep.include({ accepted: false, reason: 'outranked' });
    expect(api.announcements).to.deep.equal([announcement]);
  });

  it('POST /coordinator accepts an announcement carrying undelivered events', async () => {
    const undelivered = {
      peer: {
        id: 'worker-2@10.0.0.2',
        address: '10.0.0.2:8080',
        alive: false,
        node_name: 'worker-2',
        health: 'dead',
        path_broken: false,
        since: '2025-05-01T12:00:00.000Z',
      },
      coordinator: lower.id,
      coordinator_address: lower.address,
      event: 'peer_dead',
      epoch: 1,
      timestamp: '2025-05-01T12:00:00.000Z',
      dedup_key: 'knh:10.0.0.2:8080:1746100800000:dead',
    };
    const announcement = { from: lower, epoch: 1, peers: [], undelivered: [undelivered] };
    await expectJson(
      await post('/coordinator', JSON.stringify(announcement)),
      200,
      'announcement-reply',
    );
    expect(api.announcements).to.deep.equal([announcement]);
  });

  const probeRequest: RelayProbeRequest = { from: lower, target: '10.0.0.2:8080', timeout_ms: 850 };

  it('GET /metrics answers the Prometheus text format', async () => {
    const res = await fetch(url('/metrics'));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).to.include('knh_self_suspect 0');
  });

  it('POST /probe answers 200 with the indirect probe result', async () => {
    const body = await expectJson(
      await post('/probe', JSON.stringify(probeRequest)),
      200,
      'probe-result',
    );
    expect(body).to.deep.equal(api.probeAnswer.status === 200 ? api.probeAnswer.body : null);
    expect(api.probes).to.deep.equal([probeRequest]);
  });

  for (const status of [403, 429] as const) {
    it(`POST /probe answers ${status} with the error when the relay refuses`, async () => {
      api.probeAnswer = { status, error: `refused with ${status}` };
      const body = await expectJson(
        await post('/probe', JSON.stringify(probeRequest)),
        status,
        'error-response',
      );
      expect(body).to.deep.equal({ error: `refused with ${status}` });
    });
  }

  const malformedProbes: [string, unknown][] = [
    ['no timeout_ms', { from: lower, target: '10.0.0.2:8080' }],
    ['timeout_ms 0', { ...probeRequest, timeout_ms: 0 }],
    ['a fractional timeout_ms', { ...probeRequest, timeout_ms: 1.5 }],
    ['timeout_ms over a minute', { ...probeRequest, timeout_ms: 600_000 }],
    ['a host name as target', { ...probeRequest, target: 'worker-2:8080' }],
    ['a target without a port', { ...probeRequest, target: '10.0.0.2' }],
    ['no from', { target: '10.0.0.2:8080', timeout_ms: 850 }],
  ];
  for (const [what, value] of malformedProbes) {
    it(`POST /probe answers 400 to ${what}, without probing`, async () => {
      const body = (await expectJson(
        await post('/probe', JSON.stringify(value)),
        400,
        'error-response',
      )) as { details?: string[] };
      expect(body.details).to.be.an('array').that.is.not.empty;
      expect(api.probes).to.deep.equal([]);
    });
  }

  it('takes a peer message with a field it does not know, as a newer version may send, and ignores the field', async () => {
    const res = await post('/election', JSON.stringify({ from: lower, epoch: 1, priority: 9 }));
    expect(res.status).to.equal(200);
    expect(api.elections).to.have.length(1);
    expect(api.elections[0]).to.deep.include({ from: lower, epoch: 1 });
    const probe = await post('/probe', JSON.stringify({ ...probeRequest, via: 'a newer relay' }));
    expect(probe.status).to.equal(200);
    expect(api.probes).to.have.length(1);
  });

  it('POST /paths/echo answers the same payload back (a full-size probe)', async () => {
    const echo: PathEcho = { from: lower, payload: 'x'.repeat(1_400) };
    const body = (await expectJson(
      await post('/paths/echo', JSON.stringify(echo)),
      200,
      'path-echo',
    )) as PathEcho;
    expect(body.payload).to.have.length(1_400);
    expect(body.from).to.deep.equal(self);
  });

  it('POST /paths/echo refuses (400) a payload of other bytes than x, and (413) one over the body limit', async () => {
    const odd = await post('/paths/echo', JSON.stringify({ from: lower, payload: 'xxy' }));
    await expectJson(odd, 400, 'error-response');
    const big = { from: lower, payload: 'x'.repeat(BODY_LIMIT) };
    await expectJson(await post('/paths/echo', JSON.stringify(big)), 413, 'error-response');
  });

  it('POST /paths/report hands a valid report on and answers its reply; a bad one gets 400', async () => {
    const report: PathReport = {
      from: lower,
      epoch: 4,
      seq: 0,
      full: true,
      paths: [
        {
          to: '10.0.0.2:8080',
          state: 'degraded',
          since: 1_000,
          samples: 10,
          loss_ratio: 0.2,
          p50_ms: 3,
          p99_ms: 600,
        },
      ],
    };
    const body = await expectJson(
      await post('/paths/report', JSON.stringify(report)),
      200,
      'path-report-reply',
    );
    expect(body).to.deep.equal({ accepted: true, resync: false });
    expect(api.reports).to.deep.equal([report]);
    const bad = { ...report, paths: [{ ...report.paths[0], state: 'broken' }] };
    await expectJson(await post('/paths/report', JSON.stringify(bad)), 400, 'error-response');
    const elsewhereReport = { ...report, from: elsewhere };
    await expectJson(
      await post('/paths/report', JSON.stringify(elsewhereReport)),
      403,
      'error-response',
    );
    expect(api.reports, 'only the valid one').to.have.length(1);
  });

  it('POST /paths/pull answers a full report to the coordinator it names, and 503 to another epoch', async () => {
    const ask = (epoch: number) => post('/paths/pull', JSON.stringify({ from: lower, epoch }));
    const body = await expectJson(await ask(4), 200, 'path-report');
    expect(body).to.deep.include({ full: true, seq: 7, from: self });
    const refused = (await expectJson(await ask(5), 503, 'error-response')) as { error: string };
    expect(refused.error).to.match(/does not lead/);
    await expectJson(await post('/paths/pull', '{"from":1}'), 400, 'error-response');
  });

  it("names the peer protocol it speaks in every answer, and hears the asker's", async () => {
    const res = await fetch(url('/ping'));
    expect(res.headers.get('x-knh-protocol')).to.equal(String(PROTOCOL));
    const answered = await post(
      '/coordinator',
      JSON.stringify({ from: lower, epoch: 2, peers: [] }),
      {
        'x-knh-protocol': '2',
      },
    );
    expect(answered.headers.get('x-knh-protocol')).to.equal(String(PROTOCOL));
    expect(api.announcementProtocols).to.deep.equal([2]);
    await post('/coordinator', JSON.stringify({ from: lower, epoch: 2, peers: [] }));
    expect(api.announcementProtocols, 'no header: a node of f6578aa').to.deep.equal([2, 1]);
  });

  it('answers 400 with a JSON error to a body that is not JSON', async () => {
    for (const text of ['{"from": ', 'epoch=1', '{"from":{"id":"a",}}']) {
      const body = await expectJson(await post('/election', text), 400, 'error-response');
      expect(body, text).to.have.property('error').that.is.a('string').and.not.empty;
    }
    expect(api.elections).to.deep.equal([]);
  });

  it('answers 400 to JSON that is not an object', async () => {
    for (const text of ['42', '"hello"', 'null']) {
      await expectJson(await post('/election', text), 400, 'error-response');
    }
    expect(api.elections).to.deep.equal([]);
  });

  const invalid: [string, string, unknown, RegExp][] = [
    ['/election', 'missing epoch', { from: lower }, /epoch/],
    [
      '/election',
      'a host name as address',
      { from: { id: 'x', address: 'node-a:8080' }, epoch: 1 },
      /address/,
    ],
    ['/election', 'a negative epoch', { from: lower, epoch: -1 }, /epoch/],
    ['/election', 'a fractional epoch', { from: lower, epoch: 1.5 }, /epoch/],
    ['/coordinator', 'epoch 0', { from: lower, epoch: 0, peers: [] }, /epoch/],
    ['/coordinator', 'no peers', { from: lower, epoch: 1 }, /peers/],
  ];
  for (const [path, what, value, detail] of invalid) {
    it(`answers 400 with details to ${path} with ${what}`, async () => {
      const body = (await expectJson(
        await post(path, JSON.stringify(value)),
        400,
        'error-response',
      )) as { error: string; details?: string[] };
      expect(body.details).to.be.an('array').that.is.not.empty;
      expect(body.details?.join('; ')).to.match(detail);
      expect(api.elections).to.deep.equal([]);
      expect(api.announcements).to.deep.equal([]);
    });
  }

  it('answers 400 to a sender address no peer could dial', async () => {
    // A coordinator announces itself back to a lower-ranked asker: its address must be dialable.
    const addresses = ['999.0.0.1:8080', '10.0.0.1:0', '10.0.0.1:99999', '[10.0.0.1]:8080'];
    const statuses: Record<string, number> = {};
    for (const address of addresses) {
      const res = await post('/election', JSON.stringify({ from: { id: 'x', address }, epoch: 1 }));
      statuses[address] = res.status;
    }
    expect(statuses).to.deep.equal(Object.fromEntries(addresses.map((a) => [a, 400])));
    expect(api.elections).to.deep.equal([]);
  });

  it('answers 413 to a body over the limit', async () => {
    const peers = Array.from({ length: 100 }, (_, i) => ({
      id: `worker-${i}@10.0.1.${i}`,
      address: `10.0.1.${i}:8080`,
      node_name: `worker-${i}`,
      health: 'alive',
      since: 0,
      alerted: false,
    }));
    const text = JSON.stringify({ from: lower, epoch: 1, peers });
    expect(text.length).to.be.greaterThan(BODY_LIMIT);
    await expectJson(await post('/coordinator', text), 413, 'error-response');
    expect(api.announcements).to.deep.equal([]);
  });

  it('answers 404 with a JSON error to an unknown route or method', async () => {
    await expectJson(await fetch(url('/nowhere')), 404, 'error-response');
    await expectJson(await fetch(url('/election')), 404, 'error-response');
    await expectJson(await post('/ping', '{}'), 404, 'error-response');
  });

  it('answers 503 while the node is not taking part (the handler returns null)', async () => {
    api.notTakingPart = true;
    await expectJson(
      await post('/election', JSON.stringify({ from: lower, epoch: 1 })),
      503,
      'error-response',
    );
    await expectJson(
      await post('/coordinator', JSON.stringify({ from: lower, epoch: 1, peers: [] })),
      503,
      'error-response',
    );
  });

  it('answers 500 without details when a handler throws, and logs the error', async () => {
    api.broken = true;
    const body = await expectJson(
      await post('/election', JSON.stringify({ from: lower, epoch: 1 })),
      500,
      'error-response',
    );
    expect(body).to.deep.equal({ error: 'internal error' });
    expect(logger.at('error').some((r) => r.fields.err instanceof Error)).to.be.true;
  });

  it('keeps answering /ping after all of the above', async () => {
    await post('/election', '{"broken');
    await post('/coordinator', 'x'.repeat(BODY_LIMIT * 2));
    await expectJson(await fetch(url('/ping')), 200, 'ping-response');
  });
});
