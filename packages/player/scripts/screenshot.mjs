#!/usr/bin/env node
// Takes the README's screenshot: the player with its stats panel open, one of two viewers of the
// demo's live stream, once bytes have come from the other viewer.
// Usage (after `npm run build`): node scripts/netns.mjs node packages/player/scripts/screenshot.mjs [out.png]
import { chromium } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = new URL('../../../', import.meta.url);
const { startDemoStack } = await import(new URL('e2e/dist/demo-stack.js', repo).href);
const { chromiumLaunchOptions } = await import(new URL('e2e/dist/chromium.js', repo).href);
const out = process.argv[2] ?? fileURLToPath(new URL('../docs/player-stats.png', import.meta.url));

const stack = await startDemoStack();
const browser = await chromium.launch(chromiumLaunchOptions());
try {
  const viewers = [];
  for (let viewer = 0; viewer < 2; viewer += 1) {
    const context = await browser.newContext({ viewport: { width: 900, height: 560 }, permissions: ['camera', 'microphone'] });
    const page = await context.newPage();
    await page.goto(`${stack.pages.url}/videojs.html?stream=live&stats=1`);
    viewers.push(page);
    await page.waitForTimeout(4_000);
  }
  const statsOf = (page) => page.evaluate(() => window.shoalPlayer.getStats());
  const deadline = Date.now() + 90_000;
  // The viewer that has received more from its peer makes the clearer picture.
  let page;
  let stats;
  do {
    await viewers[0].waitForTimeout(1_000);
    const all = await Promise.all(viewers.map(statsOf));
    const best = all[0].p2pBytes >= all[1].p2pBytes ? 0 : 1;
    [page, stats] = [viewers[best], all[best]];
  } while (!(stats.p2pShare > 0.3 && stats.currentTimeS > 20) && Date.now() < deadline);
  // Control bar shown (as under the mouse), then the panel redraws once more.
  await page.evaluate(() => {
    window.shoalPlayer.videojs.options_.inactivityTimeout = 0;
    window.shoalPlayer.videojs.userActive(true);
  });
  await page.waitForTimeout(1_500);
  mkdirSync(dirname(out), { recursive: true });
  await page.locator('#player').screenshot({ path: out });
  console.log(`wrote ${out} (P2P ${stats.p2pBytes} B, HTTP ${stats.httpBytes} B, ${stats.peers} peers)`);
} finally {
  await browser.close();
  await stack.close();
}
