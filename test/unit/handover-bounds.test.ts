// A term's hand-over is bounded on the wire: at most MAX_HANDED_OVER keys and events of each kind,
// keys of at most 600 characters (schemas/announcement-reply.schema.json), the whole inside a
// peer's answer (1 MiB); what a node of this version or the previous one hands over fits.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { peerStatusPayload } from '../../src/alerts/payloads.js';
import { DeliveryLog, MAX_HANDED_OVER } from '../../src/alerts/term-handover.js';
import { newRecord } from '../../src/prober/verdict.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import type { TermHandover } from '../../src/wire/term-handover.js';

const schemas = loadSchemas();
const reply = (handover: TermHandover) =>
  schemas.check('announcement-reply', {
    accepted: true,
    epoch: 6,
    coordinator: { id: 'top@10.0.0.9', address: '10.0.0.9:8080' },
    handover,
  }).ok;
const keys = (n: number, length = 40) =>
  Array.from({ length: n }, (_, i) => `knh:10.0.0.1:8080:${i}:dead`.padEnd(length, 'x'));
const event = (i: number) =>
  peerStatusPayload({
    record: {
      ...newRecord(`10.0.${i >> 8}.${i & 255}:8080`, 1_000),
      health: 'dead',
      alerted: true,
    },
    event: 'peer_dead',
    incidentMs: 1_000 + i,
    coordinator: { id: 'top@10.0.0.9', address: '10.0.0.9:8080' },
    epoch: 5,
    now: 1_000 + i,
  });
const empty: TermHandover = { epoch: 5, settled: [], in_flight: [], undelivered: [] };

describe('hand-over bounds', () => {
  it('the schema takes as many of each as a node hands over, and no more', () => {
    const schema = JSON.parse(
      readFileSync(
        new URL('../../../schemas/announcement-reply.schema.json', import.meta.url),
        'utf8',
      ),
    ) as { properties: { handover: { properties: Record<string, { maxItems: number }> } } };
    for (const list of ['settled', 'in_flight', 'undelivered']) {
      expect(schema.properties.handover.properties[list]?.maxItems, list).to.equal(MAX_HANDED_OVER);
    }
    const full = Array.from({ length: MAX_HANDED_OVER }, (_, i) => event(i));
    expect(
      reply({ ...empty, settled: keys(500), in_flight: keys(500), undelivered: full }),
    ).to.equal(true);
    expect(reply({ ...empty, settled: keys(501) }), 'settled').to.equal(false);
    expect(reply({ ...empty, in_flight: keys(501) }), 'in flight').to.equal(false);
    expect(reply({ ...empty, undelivered: [...full, event(501)] }), 'undelivered').to.equal(false);
    expect(reply({ ...empty, settled: keys(1, 601) }), 'a key over 600 characters').to.equal(false);
  });

  it('a node hands over at most MAX_HANDED_OVER of each, the newest, within a peer answer', () => {
    const log = new DeliveryLog();
    for (let i = 0; i < MAX_HANDED_OVER + 100; i++) {
      log.posting(`sent-${i}`);
      log.settled(`sent-${i}`, true, 1_000);
      log.posting(`flying-${i}`);
    }
    log.endTerm(5, 2_000);
    for (let i = 0; i < MAX_HANDED_OVER + 100; i++) log.withdraw(event(i));
    const h = log.handOver(2_000) as TermHandover;
    expect([h.settled.length, h.in_flight.length, h.undelivered.length]).to.deep.equal([
      MAX_HANDED_OVER,
      MAX_HANDED_OVER,
      MAX_HANDED_OVER,
    ]);
    expect(h.settled.at(-1)).to.equal(`sent-${MAX_HANDED_OVER + 99}`);
    expect(reply(h)).to.equal(true);
    // A peer's answer is read up to 1 MiB (peer-client.ts): a full hand-over of peer_dead events fits.
    expect(Buffer.byteLength(JSON.stringify(h))).to.be.below(1024 * 1024);
  });
});
