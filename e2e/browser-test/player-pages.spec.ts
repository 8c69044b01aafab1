// The player's other demo pages in real Chromium: the video.js page (quality menu, stats panel),
// the snippet generator, and hls.js + Shoal built by a bundler (esbuild).
import { expect, test } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { waitForPlaybackAdvance } from '../src/page-probes.js';

let stack: DemoStack;
test.beforeAll(async () => {
  stack = await startDemoStack();
});
test.afterAll(async () => {
  await stack?.close();
});

test('the video.js page plays, its quality menu switches rendition, its stats panel toggles', async ({ page }) => {
  await page.goto(`${stack.pages.url}/videojs.html?stream=vod&stats=0`);
  await waitForPlaybackAdvance(page, 2);
  // video.js hides an idle control bar from the pointer, and counts a mouse move as activity only
  // when screenX/Y change (never, in headless Chromium): leaving the player wakes it instead, then
  // the pointer enters the menu button, which opens its menu.
  const button = (await page.locator('.shoal-quality-menu').boundingBox())!;
  await page.mouse.move(button.x + button.width / 2, button.y + button.height / 2);
  await page.mouse.move(0, 0);
  await expect(page.locator('.video-js')).toHaveClass(/vjs-user-active/);
  await page.mouse.move(button.x + button.width / 2, button.y + button.height / 2);
  const items = page.locator('.shoal-quality-menu .vjs-menu-item');
  // "Auto" names the rendition ABR is on; then one item per level, highest first.
  await expect(items).toHaveText([/^Auto/, /^360p/, /^180p/], { timeout: 10_000 });
  await items.filter({ hasText: /^180p/ }).click();
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { shoalPlayer: { getStats(): { rendition: { height: number; auto: boolean } | null } } }).shoalPlayer.getStats().rendition), { timeout: 30_000 })
    .toMatchObject({ height: 180, auto: false });

  const panel = page.locator('.shoal-stats-panel');
  await expect(panel).toBeHidden();
  await page.locator('.shoal-stats-button').click();
  await expect(panel).toBeVisible();
  await expect(panel.locator('[data-stat="rendition"] .shoal-stats-value')).toContainText('180p');
  await expect(panel.locator('[data-stat="http-bytes"] .shoal-stats-value')).not.toHaveText('0 B');
  await panel.locator('.shoal-stats-close').click();
  await expect(panel).toBeHidden();
});

test('with P2P off, the player plays over HTTP and its stats panel says why', async ({ page }) => {
  await page.goto(`${stack.pages.url}/videojs.html?stream=vod&p2p=0`);
  await waitForPlaybackAdvance(page, 2);
  await expect(page.locator('.shoal-stats-note')).toHaveText('P2P is turned off for this player.');
  await expect(page.locator('.shoal-stat-share')).toHaveText('P2P off');
});

test('the snippet generator writes both snippets for a pasted stream URL', async ({ page }) => {
  await page.goto(`${stack.pages.url}/snippet.html`);
  await page.locator('#src').fill('https://cdn.example/show/master.m3u8');
  await expect(page.locator('#script-snippet')).toHaveValue(/data-shoal-src="https:\/\/cdn\.example\/show\/master\.m3u8"/);
  await expect(page.locator('#script-snippet')).toHaveValue(/<script src="http:\/\/127\.0\.0\.1:\d+\/lib\/shoal-player\/shoal-player\.min\.js" defer><\/script>/);
  await expect(page.locator('#iframe-snippet')).toHaveValue(/embed\.html\?src=https%3A%2F%2Fcdn\.example%2Fshow%2Fmaster\.m3u8&amp;tracker=ws/);
  await expect(page.locator('#iframe-snippet')).toHaveValue(/ title="Video player" .* allow="autoplay; fullscreen; picture-in-picture"/);

  // ICE servers: a TURN server with credentials goes into both snippets; one without is named.
  await page.locator('#ice-servers').fill('[{"urls":"turn:turn.example:3478","username":"u","credential":"p"}]');
  await expect(page.locator('#script-snippet')).toHaveValue(/data-shoal-ice-servers="\[\{&quot;urls&quot;:&quot;turn:turn\.example:3478&quot;/);
  await expect(page.locator('#iframe-snippet')).toHaveValue(/&amp;iceServers=%5B%7B%22urls%22%3A%22turn%3Aturn\.example%3A3478%22/);
  await page.locator('#ice-servers').fill('[{"urls":"turn:turn.example:3478"}]');
  await expect(page.locator('#problem')).toHaveText(/iceServers: \[0\]: the TURN server turn:turn\.example:3478 needs `username` and `credential`/);
  await page.locator('#ice-servers').fill('[]');
  await expect(page.locator('#problem')).toBeHidden();
  await expect(page.locator('#script-snippet')).toHaveValue(/data-shoal-ice-servers="\[\]"/);
});

test('hls.js + Shoal bundled by esbuild plays', async ({ page }) => {
  const build = spawnSync(process.execPath, [fileURLToPath(new URL('../../examples/bundler/build.mjs', import.meta.url))], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
  await page.goto(`${stack.pages.url}/bundler/`);
  await waitForPlaybackAdvance(page, 3);
  await expect(page.locator('#stats')).toContainText('HTTP');
});
