// What every client compared by bench/peer-client.ts is to the load: one GET /ping of peer i, which
// ends as an answer knh would accept or as why not. The library clients judge an answer as knh's
// own client does (a 2xx whose body is a ping-response), so that the comparison is of HTTP alone.
import { PROTOCOL, PROTOCOL_HEADER } from '../../src/wire/protocol.js';
import type { SchemaRegistry } from '../../src/wire/schemas.js';

export interface PingClient {
  /** Peer `index`'s answer: null when it is one knh accepts, else why it failed. */
  ping(index: number): Promise<string | null>;
  /** Closes every connection it keeps. */
  close(): Promise<void>;
}

export interface PingClientOptions {
  /** Every peer, ip:port. */
  addresses: readonly string[];
  /** Each request's bound, connection and answer together, as far as the client can bound it. */
  timeoutMs: number;
  schemas: SchemaRegistry;
}

/** The headers of knh's own ping (peer-client.ts): the library clients send the same. */
export const PING_HEADERS = {
  accept: 'application/json',
  [PROTOCOL_HEADER]: String(PROTOCOL),
} as const;

/** As knh's client judges a ping's answer: null if accepted, else why not. */
export function judgePing(schemas: SchemaRegistry, status: number, body: string): string | null {
  if (status < 200 || status >= 300) return `HTTP ${status}`;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return 'answer is not JSON';
  }
  return schemas.check('ping-response', value).ok ? null : 'answer fails ping-response';
}

/** A failure's short name for the table: its code where it has one. */
export function failureOf(err: unknown): string {
  if (err instanceof Error) return (err as NodeJS.ErrnoException).code ?? err.message;
  return String(err);
}
