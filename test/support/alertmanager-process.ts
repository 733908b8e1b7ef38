// A real Prometheus Alertmanager (Debian's `prometheus-alertmanager`) for integration tests: started
// on a free loopback port with a throwaway config and storage, read through its own API v2.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'mocha';
import { meshPorts } from './mesh-ports.js';
import { pollUntil } from './poll.js';

export const ALERTMANAGER_PATH = '/usr/bin/prometheus-alertmanager';
const SKIP_ENV = 'KNH_SKIP_ALERTMANAGER';
/** How long Alertmanager may take to answer /-/ready (it loads in well under a second when idle). */
const READY_MS = 20_000;
const STOP_GRACE_MS = 5_000;

/** One route to a receiver that notifies nobody: the tests read alerts through the API. */
const CONFIG = `route:
  receiver: blackhole
  group_wait: 1s
  group_interval: 1s
receivers:
  - name: blackhole
`;

/** An alert as GET /api/v2/alerts returns it (the fields the tests read). */
export interface GettableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  fingerprint: string;
  generatorURL?: string;
  status: { state: 'unprocessed' | 'active' | 'suppressed' };
}

export class AlertmanagerProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private output = '';

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  /** `http://127.0.0.1:<port>`, what ALERTMANAGER_URL is set to. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** What Alertmanager printed (for failure messages). */
  get log(): string {
    return this.output;
  }

  /** The command line it was started with. */
  get args(): string[] {
    return [
      `--config.file=${join(this.dir, 'alertmanager.yml')}`,
      `--storage.path=${join(this.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${this.port}`,
      // No gossip: a lone instance, no cluster port, no waiting for peers to settle.
      '--cluster.listen-address=',
      '--log.level=warn',
    ];
  }

  /** Starts Alertmanager on a free port and resolves once GET /-/ready answers 200. */
  static async start(): Promise<AlertmanagerProcess> {
    const dir = mkdtempSync(join(tmpdir(), 'knh-alertmanager-'));
    writeFileSync(join(dir, 'alertmanager.yml'), CONFIG);
    const [port] = await meshPorts(1);
    if (port === undefined) throw new Error('no free port for Alertmanager');
    const am = new AlertmanagerProcess(port, dir);
    try {
      await am.launch();
    } catch (err) {
      await am.stop();
      throw err;
    }
    return am;
  }

  private async launch(): Promise<void> {
    const child = spawn(ALERTMANAGER_PATH, this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const keep = (chunk: Buffer) =>
      (this.output = (this.output + chunk.toString('utf8')).slice(-20_000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', (err) => {
        this.output += `\nspawn ${ALERTMANAGER_PATH}: ${err.message}`;
        resolve();
      });
    });
    let gone = false;
    void this.exited.then(() => (gone = true));
    await pollUntil(
      `Alertmanager answering ${this.url}/-/ready`,
      async () => {
        if (gone) throw new Error(`Alertmanager exited (${child.exitCode}):\n${this.output}`);
        try {
          const res = await fetch(`${this.url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
          return res.ok ? true : undefined;
        } catch {
          return undefined;
        }
      },
      { timeoutMs: READY_MS, everyMs: 100, describe: () => this.output.slice(-2_000) },
    );
  }

  /** POST /api/v2/alerts; throws with Alertmanager's answer unless it is 200. */
  async post(body: unknown): Promise<void> {
    const res = await fetch(`${this.url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
    if (res.status !== 200) {
      throw new Error(`POST /api/v2/alerts: ${res.status} ${await res.text()}`);
    }
  }

  /** GET /api/v2/alerts: the alerts not yet ended (Alertmanager leaves out resolved ones). */
  async alerts(filter: Record<string, string> = {}): Promise<GettableAlert[]> {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(filter))
      query.append('filter', `${name}="${value}"`);
    const res = await fetch(`${this.url}/api/v2/alerts?${query.toString()}`, {
      signal: AbortSignal.timeout(5_000),
    });
    if (res.status !== 200)
      throw new Error(`GET /api/v2/alerts: ${res.status} ${await res.text()}`);
    return (await res.json()) as GettableAlert[];
  }

  /** SIGTERM, SIGKILL after 5 s, then removes the config and storage; safe to call twice. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await this.exited;
      clearTimeout(killer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Registers hooks that start one Alertmanager for the suite and stop it whatever happens, and
 * returns its accessor. Without the binary the suite fails, or is skipped when
 * KNH_SKIP_ALERTMANAGER=1.
 */
export function useAlertmanager(): () => AlertmanagerProcess {
  let am: AlertmanagerProcess | null = null;

  before(async function (this: Context) {
    if (!existsSync(ALERTMANAGER_PATH)) {
      const why = `${ALERTMANAGER_PATH} is missing: install Debian's prometheus-alertmanager package (apt-get install prometheus-alertmanager); CI installs it`;
      if (process.env[SKIP_ENV] === '1') {
        console.log(`    skipped (${SKIP_ENV}=1): ${why}`);
        this.skip();
      }
      throw new Error(`${why}. Set ${SKIP_ENV}=1 to skip the Alertmanager tests instead.`);
    }
    am = await AlertmanagerProcess.start();
  });

  after(async () => {
    await am?.stop();
    am = null;
  });

  return () => {
    if (!am) throw new Error('Alertmanager is not running (the before hook failed)');
    return am;
  };
}
