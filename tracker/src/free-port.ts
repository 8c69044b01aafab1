// uWS listens with SO_REUSEPORT, which lets a second listener (another worker thread, or a new
// TLS app after a certificate reload) share a port, but only a port given by number: a socket
// bound to port 0 got its port from the kernel without sharing. So `port: 0` is first turned
// into a free port number.

import { createServer } from 'node:net';

export function findFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
