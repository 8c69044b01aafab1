// The consumer check, part 2: the pages that e2e/consumer/prepare.mjs built from the packed and
// npm-installed packages (one bundled by esbuild with the ESM player, one by Vite with the app's
// own video.js + the plugin) play the sample stream in Chromium, under the strict
// Content-Security-Policy the player README documents, and share segments over P2P through the
// tracker installed from its tarball. `npm test` runs prepare.mjs first and passes its output
// dir in SHOAL_CONSUMER_DIR (it needs the registry, the browser tests run without a network).
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOrigin, type Origin } from '../src/origin.js';
import { waitForPlaybackAdvance } from '../src/page-probes.js';
import { startStaticServer, type StaticServer } from '../src/static-server.js';
import { startTrackerProcess, type TrackerProcess } from '../src/tracker-process.js';

const consumerDir = process.env.SHOAL_CONSUMER_DIR;
test.skip(!consumerDir, 'needs SHOAL_CONSUMER_DIR: run `node e2e/consumer/prepare.mjs` first (npm test does)');

let origin: Origin;
let tracker: TrackerProcess;
let pages: StaticServer;
test.beforeAll(async () => {
  const built = JSON.parse(readFileSync(join(consumerDir!, 'consumer.json'), 'utf8')) as { pages: string; trackerCli: string };
  origin = await startOrigin();
  tracker = await startTrackerProcess({ cli: built.trackerCli });
  pages = await startStaticServer({ mounts: { '/': built.pages }, config: { src: `${origin.url}/live/master.m3u8`, trackerUrls: [tracker.url] } });
});
test.afterAll(async () => {
  await Promise.all([pages?.close(), tracker?.close(), origin?.close()]);
});

interface ConsumerStats {
  playback: string;
  p2p: string;
  httpBytes: number;
  p2pBytes: number;
  uploadedBytes: number;
}

const statsOf = (page: Page) =>
  page.evaluate(() => (window as unknown as { consumer: { stats(): ConsumerStats } }).consumer.stats());

async function openConsumerPage(page: Page, path: string): Promise<void> {
  // Every Content-Security-Policy violation the page meets, with the directive and what it blocked.
  await page.addInitScript(() => {
    const seen: string[] = [];
    Object.assign(window, { cspViolations: seen });
    document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`));
  });
  await page.goto(`${pages.url}${path}`);
  await waitForPlaybackAdvance(page, 2);
}

test('pages bundled from the npm-installed tarballs (esbuild: ESM player, Vite: own video.js + plugin) play and share segments over P2P', async ({ browser }) => {
  const esbuildViewer = await (await browser.newContext()).newPage();
  const viteViewer = await (await browser.newContext()).newPage();
  try {
    await openConsumerPage(esbuildViewer, '/esbuild/');
    await openConsumerPage(viteViewer, '/vite/');
    for (const viewer of [esbuildViewer, viteViewer]) {
      expect(await statsOf(viewer)).toMatchObject({ playback: 'hls.js', p2p: 'on' });
      await expect(viewer.locator('.shoal-stats-panel')).toBeVisible();
    }
    // The Vite page's third-party listener on video.js's quality level list heard of each rendition.
    const heights = await viteViewer.evaluate(() => (window as unknown as { consumer: { heightsSeen: number[] } }).consumer.heightsSeen);
    expect([...heights].sort((a, b) => a - b)).toEqual([180, 360]);

    const p2pBytes = async () => (await statsOf(esbuildViewer)).p2pBytes + (await statsOf(viteViewer)).p2pBytes;
    await expect.poll(p2pBytes, { timeout: 90_000, intervals: [2_000] }).toBeGreaterThan(0);
    const uploaded = (await statsOf(esbuildViewer)).uploadedBytes + (await statsOf(viteViewer)).uploadedBytes;
    expect(uploaded).toBeGreaterThan(0);
    await waitForPlaybackAdvance(esbuildViewer, 1);
    await waitForPlaybackAdvance(viteViewer, 1);

    for (const viewer of [esbuildViewer, viteViewer]) {
      expect(await viewer.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([]);
    }
  } finally {
    await esbuildViewer.context().close();
    await viteViewer.context().close();
  }
});
