// The faults a HostNetwork injects, as data: iptables rules per host, and a SIGSTOP/SIGCONT duty cycle.
//
// Every host's namespace has two chains of ours, hooked first into INPUT and OUTPUT at build time
// (and a third that only turns connection tracking on); a fault appends to the two and heal()
// flushes them. Rules only ever name the knh hosts' addresses, so traffic to the receiver (the
// bridge address) always passes.

export const IN_CHAIN = 'KNHT-IN';
export const OUT_CHAIN = 'KNHT-OUT';
/**
 * A chain nothing jumps to, never flushed, holding one conntrack rule: loading it makes the
 * namespace track connections from the start. Were tracking to begin with a fault's conntrack
 * rule, a connection open already would be picked up mid-stream, its original direction taken
 * from whichever packet came first, and a node under noOwnConnectionsTo could go on using a
 * connection it opened (seen in CI: an egress-cut node still reaching the coordinator).
 */
export const CONNTRACK_CHAIN = 'KNHT-CT';

/** iptables-restore input creating our chains and hooking two in (run once per namespace). */
export function chainSetup(): string {
  return [
    '*filter',
    `:${IN_CHAIN} - [0:0]`,
    `:${OUT_CHAIN} - [0:0]`,
    `:${CONNTRACK_CHAIN} - [0:0]`,
    `-I INPUT 1 -j ${IN_CHAIN}`,
    `-I OUTPUT 1 -j ${OUT_CHAIN}`,
    `-A ${CONNTRACK_CHAIN} -m conntrack --ctstate INVALID -j RETURN`,
    'COMMIT',
    '',
  ].join('\n');
}

/** iptables-restore input appending `rules` (each without the leading `-A`), applied atomically. */
export function appendRules(rules: readonly string[]): string {
  return ['*filter', ...rules.map((r) => `-A ${r}`), 'COMMIT', ''].join('\n');
}

export function flushRules(): string {
  return ['*filter', `-F ${IN_CHAIN}`, `-F ${OUT_CHAIN}`, 'COMMIT', ''].join('\n');
}

/** Rules dropping all traffic with `others`, both ways. */
export function isolateFrom(others: readonly string[]): string[] {
  return others.flatMap((ip) => [`${IN_CHAIN} -s ${ip} -j DROP`, `${OUT_CHAIN} -d ${ip} -j DROP`]);
}

/** Rules dropping what arrives from `others` (this host still sends). */
export function deafTo(others: readonly string[]): string[] {
  return others.map((ip) => `${IN_CHAIN} -s ${ip} -j DROP`);
}

/** Rules dropping a random fraction `p` of the packets arriving from `others`. */
export function lossyFrom(others: readonly string[], p: number): string[] {
  if (!(p > 0 && p < 1)) throw new Error(`loss probability ${p}: expected 0 < p < 1`);
  return others.map(
    (ip) => `${IN_CHAIN} -s ${ip} -m statistic --mode random --probability ${p} -j DROP`,
  );
}

/**
 * Rules dropping what this host sends to `others` on the connections it opened (conntrack's
 * original direction), those open already too: it answers what they open to it, and reaches
 * nothing itself, as under an egress NetworkPolicy or a broken SNAT.
 */
export function noOwnConnectionsTo(others: readonly string[]): string[] {
  return others.map((ip) => `${OUT_CHAIN} -d ${ip} -m conntrack --ctdir ORIGINAL -j DROP`);
}

/** Rules dropping the packets of at least `minBytes` (IP length) exchanged with `others`, both ways. */
export function largeDropped(others: readonly string[], minBytes: number): string[] {
  const length = `-m length --length ${minBytes}:65535`;
  return others.flatMap((ip) => [
    `${IN_CHAIN} -s ${ip} ${length} -j DROP`,
    `${OUT_CHAIN} -d ${ip} ${length} -j DROP`,
  ]);
}

/**
 * A CPU-throttled process: SIGSTOP for `stoppedMs`, SIGCONT for the rest of each `periodMs`,
 * until stop(), which always leaves it running (SIGCONT).
 */
export class DutyCycle {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private cycles = 0;

  constructor(
    private readonly pid: number,
    private readonly stoppedMs: number,
    private readonly periodMs: number,
  ) {
    if (!(stoppedMs > 0 && stoppedMs < periodMs)) {
      throw new Error(`duty cycle ${stoppedMs}/${periodMs} ms: expected 0 < stopped < period`);
    }
  }

  get count(): number {
    return this.cycles;
  }

  start(): this {
    this.pause();
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.signal('SIGCONT');
  }

  private pause(): void {
    if (this.stopped) return;
    this.cycles++;
    if (!this.signal('SIGSTOP')) return;
    this.timer = setTimeout(() => this.resume(), this.stoppedMs);
  }

  private resume(): void {
    if (this.stopped) return;
    this.signal('SIGCONT');
    this.timer = setTimeout(() => this.pause(), this.periodMs - this.stoppedMs);
  }

  /** False once the process is gone. */
  private signal(signal: NodeJS.Signals): boolean {
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}
