// The interactive demo's keys: a digit toggles that node, `c` kills the coordinator, `q` quits.

export interface KeyActions {
  /** Kill node `index` if it runs, else start it again. */
  toggle(index: number): void;
  killCoordinator(): void;
  quit(): void;
}

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';

/** Reads single keystrokes from a terminal (raw mode); returns a function that restores it. */
export function listenForKeys(
  stdin: NodeJS.ReadStream,
  nodes: number,
  actions: KeyActions,
): () => void {
  // Raw mode delivers Ctrl-C as a byte instead of SIGINT, so it is handled here as a quit.
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  const onData = (chunk: string) => {
    for (const key of chunk) {
      const digit = Number(key);
      if (/^[1-9]$/.test(key) && digit <= nodes) actions.toggle(digit);
      else if (key === 'c' || key === 'C') actions.killCoordinator();
      else if (key === 'q' || key === 'Q' || key === CTRL_C || key === CTRL_D) actions.quit();
    }
  };
  stdin.on('data', onData);
  stdin.resume();
  return () => {
    stdin.off('data', onData);
    stdin.setRawMode(false);
    stdin.pause();
  };
}
