// Starts either tracker on 127.0.0.1 for a test: ours in-process, bittorrent-tracker's server
// as the reference implementation.

import Server from 'bittorrent-tracker/server';
import { startTracker } from '../../src/index.js';
import type { TrackerOptions } from '../../src/config.js';

export interface TestTracker {
  name: string;
  url: string;
  /** Several entry points to one tracker (a cluster's nodes): tests connect to them in turn. */
  urls?: string[];
  close(): Promise<void>;
}

export async function startShoal(options: Partial<TrackerOptions> = {}): Promise<TestTracker & Awaited<ReturnType<typeof startTracker>>> {
  const tracker = await startTracker({ host: '127.0.0.1', port: 0, logLevel: 'silent', ...options });
  return Object.assign(tracker, { name: 'shoal' });
}

export async function startReference(): Promise<TestTracker> {
  const server = new Server({ udp: false, http: false, ws: true, stats: false });
  server.on('warning', () => {});
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.ws.address() as { port: number }).port;
  return {
    name: 'bittorrent-tracker',
    url: `ws://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
