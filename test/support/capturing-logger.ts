// A Logger that keeps every record in memory, with a child's bindings merged in as pino does.
import type { LogFn, Logger } from '../../src/core/logger.js';

export type Level = 'error' | 'warn' | 'info' | 'debug';

export interface LogRecord {
  level: Level;
  msg: string;
  fields: Record<string, unknown>;
}

export class CapturingLogger implements Logger {
  readonly error: LogFn = this.logAt('error');
  readonly warn: LogFn = this.logAt('warn');
  readonly info: LogFn = this.logAt('info');
  readonly debug: LogFn = this.logAt('debug');

  /** Children share their parent's records. */
  constructor(
    readonly records: LogRecord[] = [],
    private readonly bindings: Record<string, unknown> = {},
  ) {}

  child(bindings: Record<string, unknown>): Logger {
    return new CapturingLogger(this.records, { ...this.bindings, ...bindings });
  }

  at(level: Level): LogRecord[] {
    return this.records.filter((r) => r.level === level);
  }

  private logAt(level: Level): LogFn {
    return (fieldsOrMsg: object | string, msg?: string) => {
      const fields = typeof fieldsOrMsg === 'string' ? {} : fieldsOrMsg;
      const text = typeof fieldsOrMsg === 'string' ? fieldsOrMsg : (msg ?? '');
      this.records.push({ level, msg: text, fields: { ...this.bindings, ...fields } });
    };
  }
}
