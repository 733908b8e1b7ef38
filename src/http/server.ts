// Binds the app to a port and closes it: the only module that listens.
import { createServer, type Server } from 'node:http';
import type { RequestListener } from 'node:http';

export interface HttpServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function listen(
  app: RequestListener,
  host: string,
  port: number,
): Promise<HttpServer> {
  const server: Server = createServer(app);
  // Peers poll often; keep idle sockets short so shutdown and crashes free them fast.
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
