// embed.html with an integrity manifest made by `shoal-manifest` over the sample stream, against a
// hostile peer that answers every request with another segment's valid bytes (e2e/pages
// hostile-peer.html, `wrong-bytes`), the only peer in the swarm: the viewer bans it, plays on
// without a stall, and every segment it played came from the origin in full.
import { expect, test } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageMounts, startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { startStaticServer, type StaticServer } from '../src/static-server.js';

const repoPath = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
let stack: DemoStack;
/** The player's files, the hostile page, the sample segments it serves, and the manifest. */
let pages: StaticServer;
let manifestDir: string;
test.beforeAll(async () => {
  manifestDir = mkdtempSync(join(tmpdir(), 'shoal-integrity-'));
  // What a publisher runs over its VOD folder.
  const made = spawnSync(process.execPath, [repoPath('packages/core/bin/shoal-manifest.js'), repoPath('e2e/media'), '--out', join(manifestDir, 'vod-sha256.json')], { encoding: 'utf8' });
  expect(made.status, made.stderr).toBe(0);
  stack = await startDemoStack();
  pages = await startStaticServer({ mounts: { ...pageMounts(), '/media/': repoPath('e2e/media'), '/manifests/': manifestDir } });
});
test.afterAll(async () => {
  await Promise.all([stack?.close(), pages?.close()]);
  rmSync(manifestDir, { recursive: true, force: true });
});

interface HostileSnapshot {
  error: string | null;
  peers: Array<{ requests: number; closedAtMs: number | null; closeReason: string | null }>;
}

test('embed.html with a shoal-manifest manifest bans a wrong-bytes peer and plays the origin’s bytes only, without a stall', async ({ browser }) => {
  test.setTimeout(120_000);
  const src = `${stack.origin.url}/vod/master.m3u8`;
  const hostile = await browser.newPage();
  await hostile.goto(`${pages.url}/test/hostile-peer.html?${new URLSearchParams({ src, trackers: stack.tracker.url, iceServers: '[]', behaviour: 'wrong-bytes' })}`);
  await expect.poll(() => hostile.evaluate(() => (window as unknown as { hostilePeer?: { snapshot(): { peerId: string | null } } }).hostilePeer?.snapshot().peerId ?? null), { timeout: 15_000 }).not.toBeNull();

  const viewer = await browser.newPage();
  const query = new URLSearchParams({ src, tracker: stack.tracker.url, iceServers: '[]', autoplay: '1', muted: '1', integrity: `${pages.url}/manifests/vod-sha256.json` });
  await viewer.goto(`${pages.url}/lib/shoal-player/embed.html?${query}`);
  await expect.poll(() => viewer.evaluate(() => document.querySelector('video')?.currentTime ?? 0), { timeout: 30_000 }).toBeGreaterThan(0.5);
  await viewer.evaluate(() => {
    const video = document.querySelector('video')!;
    Object.assign(window, { stalls: 0 });
    video.addEventListener('waiting', () => ((window as unknown as { stalls: number }).stalls += 1));
  });

  // The hostile peer was asked, answered with wrong bytes, and the viewer closed it.
  const snapshot = () => hostile.evaluate(() => (window as unknown as { hostilePeer: { snapshot(): HostileSnapshot } }).hostilePeer.snapshot());
  await expect.poll(async () => (await snapshot()).peers.some((peer) => peer.requests > 0 && peer.closedAtMs !== null), { timeout: 45_000, message: 'the viewer never asked and banned the hostile peer' }).toBe(true);
  expect((await snapshot()).error).toBeNull();
  const playedS = await viewer.evaluate(() => document.querySelector('video')!.currentTime);
  await viewer.waitForTimeout(6_000);
  const state = await viewer.evaluate(() => ({ currentTime: document.querySelector('video')!.currentTime, stalls: (window as unknown as { stalls: number }).stalls }));
  expect(state.currentTime).toBeGreaterThan(playedS + 3);
  expect(state.stalls).toBe(0);
  // A banned peer is not let back: it stays closed.
  const peers = (await snapshot()).peers;
  expect(peers.filter((peer) => peer.closedAtMs === null && peer.requests > 0)).toEqual([]);

  // Every segment the player has played through came from the origin, in full: the hostile peer
  // was its only peer, so nothing of what it sent reached the player.
  const played = Math.floor(state.currentTime / 2);
  const served = stack.origin.stats().segmentsByPath;
  const rendition = Object.keys(served).find((path) => /\/vod\/\d+p\//.test(path))!.split('/')[2];
  for (let index = 0; index < played; index += 1) {
    const entry = Object.entries(served).find(([path]) => path.endsWith(`-${String(index).padStart(3, '0')}.ts`));
    expect(entry, `segment ${index} (${rendition}) never came from the origin`).toBeDefined();
    expect(entry![1].bytes, `segment ${index}`).toBeGreaterThanOrEqual(entry![1].size);
  }
});
