// GET /status as the benches' readers ask it: as a browser or `curl --compressed` does (gzip
// taken), the body counted, not decoded, so that a reader on the same cores as the node it reads
// takes as little CPU from it as it can.
import { get } from 'node:http';

/** What a reader got: answers by status (`error`: none came), and the bytes of a 200's body. */
export interface ReadTally {
  byStatus: Record<string, number>;
  bodyBytes: number;
}

/** One GET /status of `address` (ip:port), from the local address `from` if given. */
export function askStatus(
  address: string,
  from: string | undefined,
  into: ReadTally,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const count = (status: string) => {
      into.byStatus[status] = (into.byStatus[status] ?? 0) + 1;
      resolve();
    };
    const req = get(
      `http://${address}/status`,
      {
        headers: { 'accept-encoding': 'gzip' },
        timeout: 5_000,
        ...(from === undefined ? {} : { localAddress: from }),
      },
      (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => {
          if (res.statusCode === 200) into.bodyBytes = bytes;
          count(String(res.statusCode));
        });
        res.on('error', () => count('error'));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => count('error'));
  });
}
