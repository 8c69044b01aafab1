import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { expect, test, type Page } from '@playwright/test';
import { startOrigin, type Origin } from '../src/origin.js';
import { waitForPlaybackAdvance } from '../src/page-probes.js';
import { pageMounts } from '../src/demo-stack.js';
import { startStaticServer, type StaticServer } from '../src/static-server.js';
import { startTrackerProcess, type TrackerProcess } from '../src/tracker-process.js';

// Three tracker nodes sharing a real redis-server, behind a round-robin TCP balancer, as an
// operator would run them. Real Chromium viewers land on different nodes and still share the
// live stream over WebRTC (offers and answers cross nodes through Redis); one node is then
// killed: its viewer keeps playing, reconnects through the balancer to a live node, and the
// cluster counts every viewer again.

interface Viewer {
  currentTime: number;
  stalls: number;
  fatalError: string | null;
  p2pBytes: number;
}

const parts: Array<{ close(): Promise<void> | void }> = [];
test.afterEach(async () => {
  for (const part of parts.splice(0).reverse()) await part.close();
});

async function startRedis(): Promise<{ url: string; close(): Promise<void> }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`redis-server: ${error.message} (apt-get install redis-server)`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
    const poll = setInterval(() => /Ready to accept connections/.test(output) && (clearInterval(poll), resolve()), 20);
  });
  return { url: `redis://127.0.0.1:${port}`, close: () => stop(child) };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A round-robin TCP balancer over the nodes still alive (a refused connection tries the next). */
async function startBalancer(targets: () => number[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    const ports = targets();
    const tryTarget = (attempt: number) => {
      if (attempt >= ports.length) return client.destroy();
      const upstream = createConnection({ host: '127.0.0.1', port: ports[next++ % ports.length]! });
      upstream.once('connect', () => {
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        client.pipe(upstream).pipe(client);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
      });
      upstream.once('error', () => tryTarget(attempt + 1));
    };
    tryTarget(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const snapshot = (page: Page): Promise<Viewer> =>
  page.evaluate(() => {
    const viewer = (window as unknown as { testViewer: any }).testViewer;
    return { currentTime: document.querySelector('video')!.currentTime, stalls: viewer.stalls, fatalError: viewer.fatalError, p2pBytes: viewer.shoal?.getStats().p2pBytes ?? 0 };
  });

const nodeStats = async (node: TrackerProcess) => (await (await fetch(`${node.httpUrl}/stats.json`)).json()) as { connections: number; peers: number; cluster: { localPeers: number; nodes: number } };

test('viewers on different tracker nodes share over WebRTC, and a killed node loses no playback', async ({ browser }) => {
  test.setTimeout(120_000);
  const redis = await startRedis();
  parts.push(redis);
  const nodes = await Promise.all([0, 1, 2].map(() => startTrackerProcess({ args: ['--workers', '1', '--redis', redis.url, '--cluster-lease-sec', '3', '--log-level', 'warn'] })));
  const alive = new Set(nodes);
  // The killed node has nothing left to close.
  parts.push(...nodes.map((node) => ({ close: () => (alive.has(node) ? node.close() : undefined) })));
  const balancer = await startBalancer(() => [...alive].map((node) => Number(new URL(node.url).port)));
  parts.push(balancer);
  const origin: Origin = await startOrigin({ host: '127.0.0.1', port: 0 });
  parts.push(origin);
  const pages: StaticServer = await startStaticServer({ host: '127.0.0.1', port: 0, mounts: pageMounts(), config: { originUrl: origin.url, trackerUrls: [balancer.url] } });
  parts.push(pages);

  const viewers: Page[] = [];
  for (let i = 0; i < 3; i++) {
    const context = await browser.newContext({ permissions: ['camera', 'microphone'] });
    parts.push({ close: () => context.close() });
    const page = await context.newPage();
    await page.goto(`${pages.url}/test/test-viewer.html?stream=live`);
    viewers.push(page);
    // Each viewer's tracker socket is open before the next one connects: round-robin puts one on each node.
    await expect.poll(async () => (await Promise.all(nodes.map(nodeStats))).reduce((sum, stats) => sum + stats.connections, 0), { timeout: 15_000 }).toBe(i + 1);
  }
  expect((await Promise.all(nodes.map(nodeStats))).map((stats) => stats.connections)).toEqual([1, 1, 1]);
  for (const page of viewers) await waitForPlaybackAdvance(page, 4);

  // Sharing across nodes: the viewers' swarms hold all three (each node sees every peer once).
  await expect.poll(async () => (await Promise.all(viewers.map(snapshot))).filter((viewer) => viewer.p2pBytes > 0).length, { timeout: 25_000 }).toBeGreaterThanOrEqual(2);
  const before = await nodeStats(nodes[0]!);
  expect(before.cluster.nodes).toBe(3);
  expect(before.peers).toBeGreaterThanOrEqual(3);

  // Kill node 2 without warning; the balancer stops routing to it.
  const killed = nodes[2]!;
  alive.delete(killed);
  killed.process.kill('SIGKILL');
  const atKill = await Promise.all(viewers.map(snapshot));

  // Its viewer reconnects through the balancer: the two live nodes hold all three viewers' sockets,
  // and the cluster counts each viewer's peers once, all held by live nodes.
  const survivors = nodes.slice(0, 2);
  await expect
    .poll(async () => (await Promise.all(survivors.map(nodeStats))).reduce((sum, stats) => sum + stats.connections, 0), { timeout: 20_000, intervals: [500] })
    .toBe(3);
  await expect
    .poll(
      async () => {
        const stats = await Promise.all(survivors.map(nodeStats));
        return stats[0]!.peers > 0 && stats[0]!.peers === stats[0]!.cluster.localPeers + stats[1]!.cluster.localPeers && stats[0]!.cluster.nodes === 2;
      },
      { timeout: 20_000, intervals: [500] },
    )
    .toBe(true);

  // Nobody's playback suffered: every viewer advanced since the kill, without a fatal error or a new stall.
  await viewers[0]!.waitForTimeout(5_000);
  const after = await Promise.all(viewers.map(snapshot));
  console.log(JSON.stringify({ atKill, after, before }));
  after.forEach((viewer, index) => {
    expect(viewer.fatalError).toBeNull();
    expect(viewer.currentTime - atKill[index]!.currentTime).toBeGreaterThan(5);
    expect(viewer.stalls).toBeLessThanOrEqual(atKill[index]!.stalls + 1);
  });
});
