// The logging interface the core sees: the subset of pino it uses (pino's Logger satisfies it).

export interface LogFn {
  (fields: object, msg: string): void;
  (msg: string): void;
}

export interface Logger {
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}
