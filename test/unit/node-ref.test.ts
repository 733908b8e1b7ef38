// Addresses and the election's rank order: which node wins must never depend on how it is spelled.
import { expect } from 'chai';
import {
  compareRank,
  formatAddress,
  nodeId,
  outranks,
  parseAddress,
} from '../../src/wire/node-ref.js';

/** Distinct nodes, listed from the lowest rank to the highest. */
const ASCENDING = [
  '0.0.0.0:1',
  '1.2.3.4:80',
  '9.255.255.255:80',
  '10.0.0.9:8080',
  '10.0.0.10:80',
  '10.0.0.10:8080',
  '10.0.0.10:9090',
  '10.0.1.0:80',
  '255.255.255.255:65535',
  '[::]:80',
  '[::1]:80',
  '[::ffff:1.2.3.4]:80', // = ::ffff:102:304
  '[::ffff:102:304]:81',
  '[::ffff:1.2.3.5]:80',
  '[2001:db8::9]:80',
  '[2001:db8::10]:80', // hex 10 > hex 9
  '[2001:db8::ff]:80',
  '[fd00::1]:8080',
  '[fd00::1:0]:8080',
  '[fd00:0:0:1::]:8080',
  '[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:1',
];

const sign = (n: number) => Math.sign(n);

describe('compareRank', () => {
  it('orders the sample as listed: IPv4 below IPv6, numeric IP, then port', () => {
    const shuffled = [...ASCENDING].reverse();
    shuffled.push(...shuffled.splice(0, 7));
    expect([...shuffled].sort(compareRank)).to.deep.equal(ASCENDING);
  });

  it('compares addresses by number, not text', () => {
    expect(compareRank('10.0.0.9:8080', '10.0.0.10:8080')).to.be.lessThan(0);
    expect(compareRank('10.0.0.10:8080', '10.0.0.9:8080')).to.be.greaterThan(0);
    expect(compareRank('10.0.0.1:9', '10.0.0.1:10')).to.be.lessThan(0);
    expect(compareRank('[fd00::9]:80', '[fd00::10]:80')).to.be.lessThan(0);
  });

  it('ranks every IPv4 address below every IPv6 address', () => {
    expect(compareRank('255.255.255.255:65535', '[::]:1')).to.be.lessThan(0);
    expect(compareRank('[::]:1', '255.255.255.255:65535')).to.be.greaterThan(0);
    expect(outranks('[::1]:80', '10.0.0.1:80')).to.be.true;
  });

  it('is 0 for an address and itself, and never for two different nodes', () => {
    for (const a of ASCENDING) {
      expect(compareRank(a, a), a).to.equal(0);
      for (const b of ASCENDING) {
        if (a !== b) expect(compareRank(a, b), `${a} vs ${b}`).to.not.equal(0);
      }
    }
  });

  it('is antisymmetric', () => {
    for (const a of ASCENDING) {
      for (const b of ASCENDING) {
        expect(sign(compareRank(a, b)), `${a} vs ${b}`).to.equal(-sign(compareRank(b, a)));
      }
    }
  });

  it('is transitive', () => {
    for (const a of ASCENDING) {
      for (const b of ASCENDING) {
        for (const c of ASCENDING) {
          if (compareRank(a, b) < 0 && compareRank(b, c) < 0) {
            expect(compareRank(a, c), `${a} < ${b} < ${c}`).to.be.lessThan(0);
          }
        }
      }
    }
  });

  it('agrees with outranks', () => {
    for (const a of ASCENDING) {
      for (const b of ASCENDING) {
        expect(outranks(a, b), `${a} vs ${b}`).to.equal(compareRank(a, b) > 0);
      }
    }
  });
});

describe('parseAddress', () => {
  const accepted: [string, { ip: string; family: 4 | 6; port: number }][] = [
    ['10.0.0.1:8080', { ip: '10.0.0.1', family: 4, port: 8080 }],
    ['255.255.255.255:65535', { ip: '255.255.255.255', family: 4, port: 65535 }],
    ['0.0.0.0:1', { ip: '0.0.0.0', family: 4, port: 1 }],
    ['[fd00::1]:8080', { ip: 'fd00::1', family: 6, port: 8080 }],
    ['[::]:80', { ip: '::', family: 6, port: 80 }],
    // IPv6 comes back in its one canonical spelling (compressed, lower case, hex groups).
    ['[::ffff:1.2.3.4]:80', { ip: '::ffff:102:304', family: 6, port: 80 }],
    ['[2001:DB8::1]:443', { ip: '2001:db8::1', family: 6, port: 443 }],
    ['[2001:db8:0:0:0:0:0:1]:443', { ip: '2001:db8::1', family: 6, port: 443 }],
  ];
  for (const [text, parsed] of accepted) {
    it(`accepts ${text}`, () => {
      expect(parseAddress(text)).to.deep.equal(parsed);
    });
  }

  const rejected: [string, string][] = [
    ['node-a:8080', 'a host name'],
    ['localhost:8080', 'localhost'],
    ['knh.default.svc:8080', 'a DNS name'],
    ['10.0.0.1', 'no port'],
    ['10.0.0.1:', 'an empty port'],
    ['10.0.0.1:0', 'port 0'],
    ['10.0.0.1:65536', 'port 65536'],
    ['10.0.0.1:80a', 'a port with letters'],
    ['256.0.0.1:80', 'an octet over 255'],
    ['01.2.3.4:80', 'a leading zero'],
    ['fd00::1:8080', 'IPv6 without brackets'],
    ['[fd00::1]', 'bracketed IPv6 without a port'],
    ['[fd00::zz]:80', 'not hex'],
    ['[fe80::1%eth0]:80', 'a zone id'],
    [' 10.0.0.1:80', 'surrounding space'],
    ['', 'nothing'],
  ];
  for (const [text, what] of rejected) {
    it(`rejects ${what} (${JSON.stringify(text)})`, () => {
      expect(parseAddress(text)).to.equal(null);
    });
  }

  it('rejects an IPv4 address in brackets, which is no URL authority', () => {
    // Documented: only `1.2.3.4:8080` or `[fd00::1]:8080`. new URL('http://[10.0.0.1]:80') throws.
    expect(parseAddress('[10.0.0.1]:8080')).to.equal(null);
  });
});

describe('formatAddress and nodeId', () => {
  it('brackets IPv6 only, and parses back to the same parts', () => {
    const cases: [string, number, string][] = [
      ['10.0.0.1', 8080, '10.0.0.1:8080'],
      ['fd00::1', 8080, '[fd00::1]:8080'],
      ['::ffff:102:304', 80, '[::ffff:102:304]:80'],
    ];
    for (const [ip, port, text] of cases) {
      expect(formatAddress(ip, port)).to.equal(text);
      expect(parseAddress(text)).to.deep.include({ ip, port });
    }
  });

  it('names a node NODE_NAME@POD_IP', () => {
    expect(nodeId('worker-1', '10.0.0.7')).to.equal('worker-1@10.0.0.7');
  });
});
