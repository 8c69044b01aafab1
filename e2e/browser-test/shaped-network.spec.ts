import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import { startShapedViewers } from '../src/swarm/viewer-networks.js';
import { runTestSwarm, SHAPED_COUNTERS } from './swarm-run.js';

// Viewers on shaped links: each its own Chromium in its own network namespace, tc tbf both ways
// (e2e/src/swarm/viewer-networks.ts). The caps are upper bounds (shaping that leaks fails);
// the floors are far below them, for a busy 2-core machine.
test('a viewer namespace on the realistic profile gets its 2 Mbit/s down and 0.44x-of-684-kbit/s up, no more', async () => {
  test.setTimeout(60_000);
  const shaped = await startShapedViewers({ count: 1, profile: 'realistic', bitrateBitsPerS: 684_000 });
  let server: Server | undefined;
  try {
    const [{ namespace, browser }] = shaped.viewers as [(typeof shaped.viewers)[0]];
    expect(namespace.link).toEqual({ upBitsPerS: 300_960, downBitsPerS: 2_000_000, uplinkQueueMs: 600, uploads: true });
    // A hub-side server: GET sends 600 kB, POST reads the whole body before answering.
    server = createServer((request, response) => {
      response.setHeader('access-control-allow-origin', '*');
      if (request.method === 'GET') return void response.end(Buffer.alloc(600_000));
      let received = 0;
      request.on('data', (chunk: Buffer) => (received += chunk.length));
      request.on('end', () => response.end(String(received)));
    });
    await new Promise<void>((resolve) => server!.listen(0, shaped.networks.hubAddress, resolve));
    const url = `http://${shaped.networks.hubAddress}:${(server.address() as AddressInfo).port}/`;
    const page = await (await browser.newContext()).newPage();
    const timed = await page.evaluate(async (target) => {
      let start = performance.now();
      const down = (await (await fetch(target)).arrayBuffer()).byteLength;
      const downMs = performance.now() - start;
      start = performance.now();
      const up = Number(await (await fetch(target, { method: 'POST', body: new Uint8Array(150_000) })).text());
      return { down, downMs, up, upMs: performance.now() - start };
    }, url);
    const downBitsPerS = (timed.down * 8) / (timed.downMs / 1000);
    const upBitsPerS = (timed.up * 8) / (timed.upMs / 1000);
    console.log(`shaped link: down ${Math.round(downBitsPerS / 1000)} kbit/s, up ${Math.round(upBitsPerS / 1000)} kbit/s (payload)`);
    expect(timed).toMatchObject({ down: 600_000, up: 150_000 });
    expect(downBitsPerS).toBeLessThanOrEqual(1.1 * 2_000_000);
    expect(downBitsPerS).toBeGreaterThanOrEqual(0.4 * 2_000_000);
    expect(upBitsPerS).toBeLessThanOrEqual(1.1 * 300_960);
    expect(upBitsPerS).toBeGreaterThanOrEqual(0.4 * 300_960);
    // The kernel counted at least the payload on the viewer's link, each way.
    const [counted] = shaped.networks.counters();
    expect(counted!.downBytes).toBeGreaterThanOrEqual(600_000);
    expect(counted!.upBytes).toBeGreaterThanOrEqual(150_000);
  } finally {
    server?.close();
    await shaped.destroy();
  }
});

test('a 3-viewer Shoal swarm on the mixed profile offloads through shaped links that hold their caps', async () => {
  test.setTimeout(150_000);
  const report = await runTestSwarm({
    name: 'mixed',
    scenario: 'live-normal',
    peers: 3,
    durationS: 40,
    engines: ['shoal'],
    network: 'mixed',
    countersUnchecked: SHAPED_COUNTERS,
  });
  const network = report.network!;
  expect(network.profile).toBe('mixed');
  expect(network.viewers.map((viewer) => viewer.up.capBitsPerS)).toEqual([300_960, 998_640, 3_002_760]);
  expect(network.shapingHeld, JSON.stringify(network.viewers)).toBe(true);
  // Everything each player got crossed its shaped link (the kernel counts headers too).
  for (const peer of report.perPeer) {
    const link = network.viewers.find((viewer) => viewer.id === peer.id)!;
    expect(link.down.bytes, peer.id).toBeGreaterThanOrEqual(peer.httpBytes + peer.p2pBytes);
    expect(link.up.bytes, peer.id).toBeGreaterThanOrEqual(peer.uploadedBytes);
  }
  expect(report.clientP2pBytes).toBeGreaterThan(0);
  expect(report.offload!).toBeGreaterThan(0);
});
