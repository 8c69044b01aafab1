// A TCP port of this namespace's loopback that leads to the same port on a viewer namespace's
// loopback. Firefox's remote agent (WebDriver BiDi) listens on its own namespace's localhost only,
// and puppeteer-core reaches it over TCP (Chromium's Playwright uses a pipe, which crosses
// namespaces by itself). Network namespaces do not separate Unix sockets in the file system: the
// relay's two halves meet through one, the inner half a Node process run inside the namespace
// with nsenter.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Pipes two sockets both ways; either one closing or failing closes the other. */
function splice(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.once('error', end).once('close', end);
  b.once('error', end).once('close', end);
}

/**
 * The inner half, `node -e INNER_RELAY SOCKET PORT`: every connection to SOCKET forwarded to
 * 127.0.0.1:PORT of the namespace it runs in, until killed. Source text, so that it runs the same
 * from the built files and from the TypeScript the browser tests load.
 */
const INNER_RELAY = `
const { connect, createServer } = require('node:net');
const [socketPath, port] = process.argv.slice(1);
createServer((client) => {
  const upstream = connect(Number(port), '127.0.0.1');
  client.pipe(upstream).pipe(client);
  const end = () => { client.destroy(); upstream.destroy(); };
  for (const socket of [client, upstream]) socket.once('error', end).once('close', end);
}).listen(socketPath);
`;

export interface NamespaceRelay {
  /** The port, the same on both loopbacks. */
  port: number;
  close(): void;
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A port free on this namespace's loopback, relayed to the same port on the loopback of the
 * namespace at `namespacePath` (/run/netns/NAME), where something is to listen on it.
 */
export async function relayIntoNamespace(namespacePath: string, name: string): Promise<NamespaceRelay> {
  const port = await freeLoopbackPort();
  const socketPath = join(tmpdir(), `${name}-relay-${port}.sock`);
  rmSync(socketPath, { force: true });
  const inner: ChildProcess = spawn('nsenter', [`--net=${namespacePath}`, process.execPath, '-e', INNER_RELAY, socketPath, String(port)], { stdio: 'ignore' });
  const close = () => {
    outer?.close();
    inner.kill();
    rmSync(socketPath, { force: true });
  };
  let outer: Server | undefined;
  const deadline = Date.now() + 15_000;
  while (!existsSync(socketPath)) {
    if (inner.exitCode !== null || Date.now() > deadline) {
      close();
      throw new Error(`the relay into ${namespacePath} did not start (exit code ${inner.exitCode})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  outer = createServer((client) => splice(client, connect(socketPath)));
  await new Promise<void>((resolve, reject) => outer!.once('error', reject).listen(port, '127.0.0.1', resolve));
  return { port, close };
}
