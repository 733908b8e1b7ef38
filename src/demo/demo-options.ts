// The `knh demo` command line: its options, their parsing and its help text.

export interface DemoOptions {
  nodes: number;
  scenario: boolean;
  /** Print each peer-status event's dedup key. */
  showKeys: boolean;
}

export const MIN_NODES = 2;
export const MAX_NODES = 9;

export const DEMO_USAGE = `usage: knh demo [--nodes N] [--scenario] [--show-keys]

Starts N real knh nodes (processes) on loopback with static discovery and default timings, plus a
webhook receiver in this process, and narrates what happens: nodes starting, elections and the
coordinator the mesh agrees on, the coordinator's probe rounds, and every webhook received
(a payload that fails knh's own JSON Schema is marked loudly; an event received before, by its
dedup key, is marked as a redelivery). Each node's line when it starts names its status page.

options:
  --nodes N     how many nodes, ${MIN_NODES} to ${MAX_NODES} (default 5); node-N has the highest address, so it leads
  --scenario    play a scripted story without input, then exit: settle the election, kill a peer
                (peer_dead), restart it (peer_recovered), kill the coordinator (a successor's
                cluster status), restart it (it takes over again), and print the measured times.
                Exit code 0 when every step completed, 1 if a step timed out.
  --show-keys   show each peer-status event's dedup key (the same for every delivery of an event)
  -h, --help    this text

keys (when stdin is a terminal and --scenario is not given):
  1..N   kill node N (SIGKILL, a crash), or restart it if it is down
  c      kill the current coordinator
  q      quit (so does Ctrl-C)

Without a terminal on stdin and without --scenario, it runs until SIGINT or SIGTERM.
Stopping, by any means, kills every node process.
`;

export type ParsedDemoArgs =
  { help: true } | { help: false; options: DemoOptions } | { error: string };

export function parseDemoArgs(args: readonly string[]): ParsedDemoArgs {
  const options: DemoOptions = { nodes: 5, scenario: false, showKeys: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '-h' || arg === '--help') return { help: true };
    if (arg === '--scenario') {
      options.scenario = true;
      continue;
    }
    if (arg === '--show-keys') {
      options.showKeys = true;
      continue;
    }
    const nodes = /^--nodes(?:=(.*))?$/.exec(arg);
    if (nodes) {
      const text = nodes[1] ?? args[++i];
      const n = Number(text);
      if (text === undefined || !/^\d+$/.test(text) || n < MIN_NODES || n > MAX_NODES) {
        return {
          error: `--nodes takes a whole number from ${MIN_NODES} to ${MAX_NODES}, not ${JSON.stringify(text ?? '')}`,
        };
      }
      options.nodes = n;
      continue;
    }
    return { error: `unknown option ${JSON.stringify(arg)}` };
  }
  return { help: false, options };
}
