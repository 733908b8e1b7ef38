// The process logger: pino JSON lines on stdout that can never block the node.
//
// A log reader that stops reading fills the stdout pipe. pino's default writer then blocks: in
// write(2) on the event loop (no probes, no answers), or in its exit hook's flushSync(), and a
// write blocked in a worker thread holds up process.exit (seen: a node piped into `head` never
// exited on SIGTERM). process.stdout over a pipe is a non-blocking libuv stream: a full pipe only
// queues. Lines past an 8 MiB backlog are dropped, a broken pipe is ignored, and exit waits for
// the backlog a bounded time.
import { pino, type Logger, type LevelWithSilent } from 'pino';

const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

/**
 * An error as a log line shows it: its type, message, code, stack and causes, nothing else. pino's
 * own serializer copies every field, and an HTTP client's error carries its request (`config`:
 * the URL with a receiver's token in its path, an Authorization header) and response.
 */
export function loggedError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return err;
  const e = err as Error & { code?: unknown; cause?: unknown };
  return {
    type: e.name,
    message: e.message,
    ...(typeof e.code === 'string' || typeof e.code === 'number' ? { code: e.code } : {}),
    ...(e.stack === undefined ? {} : { stack: e.stack }),
    ...(e.cause !== undefined && depth < 3 ? { cause: loggedError(e.cause, depth + 1) } : {}),
  };
}

export interface ProcessLog {
  logger: Logger;
  /** Resolves once stdout has taken everything logged, or after `ms`, whichever comes first. */
  settle: (ms: number) => Promise<void>;
}

export function processLogger(level: LevelWithSilent, base: Record<string, unknown>): ProcessLog {
  const out = process.stdout;
  // EPIPE when the reader is gone: nothing to do but stop caring.
  out.on('error', () => undefined);
  const destination = {
    write(line: string): void {
      if (out.writableLength <= MAX_BACKLOG_BYTES) out.write(line);
    },
  };
  const logger = pino(
    {
      level,
      base,
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: loggedError, error: loggedError },
    },
    destination,
  );
  return {
    logger,
    settle: (ms) =>
      new Promise<void>((resolve) => {
        if (out.writableLength === 0) {
          resolve();
          return;
        }
        const timer = setTimeout(resolve, ms);
        out.once('drain', () => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
