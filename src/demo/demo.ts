// `knh demo`: a narrated local mesh with a webhook receiver; interactive, scripted or until a signal.
import { SETTINGS } from '../config/settings.js';
import { Receiver } from './webhook-sink.js';
import { loadSchemas } from '../wire/schemas.js';
import { DEMO_USAGE, parseDemoArgs, type DemoOptions } from './demo-options.js';
import { listenForKeys, type KeyActions } from './keyboard.js';
import { freePorts, LocalMesh } from './mesh.js';
import { Narrator } from './narrator.js';
import { runScenario, ScenarioStepFailed, STEP_TIMEOUT_MS } from './scenario.js';
import { printer, seconds } from './terminal-style.js';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type StopSignal = (typeof STOP_SIGNALS)[number];
/** Exit codes of a scenario stopped by a signal: 128 + the signal's number. */
const SIGNAL_EXIT: Record<StopSignal, number> = {
  SIGHUP: 129,
  SIGINT: 130,
  SIGTERM: 143,
};

/** The defaults the nodes run with, as `NAME value unit`, for the opening lines. */
function timings(names: readonly string[]): string {
  return SETTINGS.filter((s) => names.includes(s.env))
    .map(
      (s) =>
        `${s.env} ${'default' in s ? s.default : '?'}${'unit' in s && s.unit === 'seconds' ? ' s' : ''}`,
    )
    .join(', ');
}

export async function runDemo(args: string[]): Promise<number> {
  const parsed = parseDemoArgs(args);
  if ('error' in parsed) {
    process.stderr.write(`knh demo: ${parsed.error} (see knh demo --help)\n`);
    return 2;
  }
  if (parsed.help) {
    process.stdout.write(DEMO_USAGE);
    return 0;
  }
  return demo(parsed.options);
}

/** What the keys do to the mesh; `restarting` counts restarts still waiting for `listening`. */
function keyActions(mesh: LocalMesh, narrator: Narrator, quit: () => void) {
  const state = { restarting: 0 };
  const killing = new Set<number>();
  const kill = (index: number) => {
    killing.add(index);
    void mesh.kill(index).finally(() => killing.delete(index));
  };
  const actions: KeyActions = {
    toggle: (index) => {
      const node = mesh.node(index);
      if (killing.has(index)) {
        narrator.say('you', `${node.name} is still stopping; press ${index} again to restart it`);
        return;
      }
      const running = mesh.isRunning(index);
      narrator.say('you', `${running ? 'kill' : 'restart'} ${node.name}`, 'bold');
      if (running) {
        kill(index);
        return;
      }
      state.restarting++;
      mesh
        .restart(index)
        .catch((err: unknown) =>
          narrator.say('demo', `${node.name}: ${(err as Error).message}`, 'red'),
        )
        .finally(() => state.restarting--);
    },
    killCoordinator: () => {
      const node = mesh.byAddress(narrator.views.likelyCoordinator() ?? '');
      if (!node || !mesh.isRunning(node.index)) {
        narrator.say('you', 'kill the coordinator: there is none right now', 'bold');
        return;
      }
      narrator.say('you', `kill the coordinator ${node.name}`, 'bold');
      kill(node.index);
    },
    quit,
  };
  return { actions, state };
}

async function demo(options: DemoOptions): Promise<number> {
  const out = printer(process.stdout);
  const receiver = await new Receiver({ schemas: loadSchemas() }).start();
  // Ascending ports: the last node has the highest address, so it is the one that leads.
  const ports = (await freePorts(options.nodes)).sort((a, b) => a - b);
  const mesh = new LocalMesh({
    size: options.nodes,
    ports,
    env: {
      LOG_LEVEL: 'debug', // the coordinator's rounds are logged at debug level
      PEER_STATUS_URL: receiver.url('/peer-status'),
      CLUSTER_STATUS_URL: receiver.url('/cluster-status'),
      CLUSTER_STATUS_INTERVAL: '30',
    },
  });
  const narrator = new Narrator(mesh, receiver, out, { showKeys: options.showKeys });

  // Last resort for an error that escapes everything below: never leave node processes behind.
  const killAll = () => mesh.nodes.forEach((n) => n.process?.kill('SIGKILL'));
  process.on('exit', killAll);
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(signal);
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  // Only a scenario cut short fails; otherwise a signal is the normal way to stop.
  const signalExit = () =>
    options.scenario ? (SIGNAL_EXIT[stop.signal.reason as StopSignal] ?? 130) : 0;
  const keys = keyActions(mesh, narrator, () => stop.abort('quit'));
  let closeKeys = () => {};
  let abandonedStart = false;

  const play = async (): Promise<number> => {
    narrator.say(
      'demo',
      `${options.nodes} knh nodes on 127.0.0.1, webhooks to ${receiver.url('/')}`,
      'bold',
    );
    narrator.say(
      'demo',
      `default timings: ${timings(['ELECTION_COOLDOWN_PERIOD', 'PROBE_TIMEOUT', 'HEARTBEAT_INTERVAL', 'COORDINATOR_TIMEOUT', 'CONNECT_MAX_RETRIES', 'CONNECT_COOLDOWN_PERIOD'])}; CLUSTER_STATUS_INTERVAL 30 s here`,
    );
    const interactive = !options.scenario && process.stdin.isTTY;
    if (interactive) {
      narrator.say(
        'keys',
        `1-${options.nodes}: kill/restart that node · c: kill the coordinator · q: quit`,
        'bold',
      );
    } else if (options.scenario) {
      narrator.say(
        'demo',
        `scenario: 5 steps, each must complete within ${STEP_TIMEOUT_MS / 1000} s of starting`,
        'bold',
      );
    } else {
      narrator.say('demo', 'running until SIGINT or SIGTERM (stdin is not a terminal: no keys)');
    }

    const spawnedMs = Date.now();
    const started = mesh.start().then(
      () => 'started' as const,
      (err: unknown) => {
        throw new Error(
          `the mesh did not start (${(err as Error).message}); a node that could not start logged why above`,
          { cause: err },
        );
      },
    );
    const interrupted = new Promise<'interrupted'>((resolve) =>
      stop.signal.addEventListener('abort', () => resolve('interrupted'), { once: true }),
    );
    if ((await Promise.race([started, interrupted])) === 'interrupted') {
      started.catch(() => {}); // the nodes are killed below; its failure is expected
      abandonedStart = true;
      narrator.say('demo', `interrupted while starting (${String(stop.signal.reason)})`, 'yellow');
      return signalExit();
    }

    if (options.scenario) {
      const measured = await runScenario({
        mesh,
        receiver,
        narrator,
        spawnedMs,
        signal: stop.signal,
      });
      narrator.mute();
      out.line('SUMMARY', 'scenario complete; measured (wall clock, default timings):', 'green');
      const width = Math.max(...measured.map((m) => m.label.length));
      for (const m of measured) out.line('SUMMARY', `  ${m.label.padEnd(width)}  ${seconds(m.ms)}`);
      const bad = narrator.badWebhooks.length;
      out.line(
        'SUMMARY',
        `  ${receiver.received.length} webhooks received, ${bad} failed their schema`,
        bad > 0 ? 'red' : 'green',
      );
      return bad > 0 ? 1 : 0;
    }

    if (interactive) closeKeys = listenForKeys(process.stdin, options.nodes, keys.actions);
    await interrupted;
    return 0; // q, or the signal that ends a run without a scenario: the normal way to stop
  };

  let code: number;
  try {
    code = await play();
  } catch (err) {
    if (stop.signal.aborted) {
      narrator.say('demo', `interrupted (${String(stop.signal.reason)})`, 'yellow');
      code = signalExit();
    } else {
      narrator.say(
        'FAILED',
        err instanceof ScenarioStepFailed ? err.message : `failed: ${(err as Error).message}`,
        'red',
      );
      code = 1;
    }
  } finally {
    closeKeys();
    narrator.mute();
    await mesh.stop();
    await receiver.close();
    narrator.close();
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    process.off('exit', killAll);
    narrator.say('demo', 'stopped: every node process has exited', 'dim');
  }
  // LocalMesh's waits for a node's `listening` line (10 s) cannot be cancelled and would hold the
  // process open after the user asked to stop; every node is gone, so leave now.
  if (abandonedStart || keys.state.restarting > 0) process.exit(code);
  return code;
}
