// The video.js plugin in real Chromium: a page that builds its own video.js player (video.js's
// full build, loaded with a script tag) adds Shoal with `player.shoal()`, plays the live stream,
// shares it over P2P with a ShoalPlayer page, and a quality picker written against video.js's
// own `qualityLevels()` API sees Shoal's renditions and switches them. The stream's subtitle
// renditions are in video.js's captions menu, and the one picked there shows its cues.
import { expect, test, type Page } from '@playwright/test';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { waitForPlaybackAdvance } from '../src/page-probes.js';

let stack: DemoStack;
test.beforeAll(async () => {
  stack = await startDemoStack();
});
test.afterAll(async () => {
  await stack?.close();
});

interface PluginView {
  p2pBytes: number;
  httpBytes: number;
  playback: string;
  renditionHeight: number | null;
  /** What video.js's quality level list holds: heights in list order, and the playing one. */
  levels: number[];
  selectedHeight: number | null;
}

/** Read through public APIs only: video.js's `getPlayer`/`qualityLevels`, and Shoal's `shoalOf`. */
function pluginView(page: Page): Promise<PluginView> {
  return page.evaluate(() => {
    const global = window as unknown as {
      videojs: { getPlayer(id: string): unknown; players: Record<string, unknown> };
      ShoalVideojs: { shoalOf(player: unknown): { getStats(): { p2pBytes: number; httpBytes: number; playback: string; rendition: { height: number } | null } } };
    };
    const player = global.videojs.getPlayer('video') as { qualityLevels(): ArrayLike<{ height: number }> & { selectedIndex: number } };
    const stats = global.ShoalVideojs.shoalOf(player).getStats();
    const list = player.qualityLevels();
    const levels = Array.from({ length: list.length }, (_, index) => list[index]!.height);
    return {
      p2pBytes: stats.p2pBytes,
      httpBytes: stats.httpBytes,
      playback: stats.playback,
      renditionHeight: stats.rendition?.height ?? null,
      levels,
      selectedHeight: list.selectedIndex >= 0 ? levels[list.selectedIndex]! : null,
    };
  });
}

test('a page’s own video.js player plays with the Shoal plugin, shares over P2P, and fills qualityLevels() for third-party pickers', async ({ browser }) => {
  const playerViewer = await (await browser.newContext()).newPage();
  const pluginViewer = await (await browser.newContext()).newPage();
  try {
    await playerViewer.goto(`${stack.pages.url}/videojs.html?stream=live`);
    await waitForPlaybackAdvance(playerViewer, 2);
    await pluginViewer.goto(`${stack.pages.url}/videojs-plugin.html?stream=live`);
    await waitForPlaybackAdvance(pluginViewer, 2);
    expect((await pluginView(pluginViewer)).playback).toBe('hls.js');

    // The page's picker (it knows only video.js's API) drew one button per level it was told of.
    await expect(pluginViewer.locator('#levels button')).toHaveText(['all', /^180p/, /^360p/]);
    expect((await pluginView(pluginViewer)).levels).toEqual([180, 360]);
    // Enabling only 180p through qualityLevels() switches Shoal's hls.js, and the list's `change` follows.
    await pluginViewer.locator('#levels button', { hasText: /^180p/ }).click();
    await expect.poll(async () => (await pluginView(pluginViewer)).renditionHeight, { timeout: 30_000 }).toBe(180);
    await expect.poll(async () => (await pluginView(pluginViewer)).selectedHeight, { timeout: 10_000 }).toBe(180);
    await expect(pluginViewer.locator('#levels button', { hasText: /^180p ▶/ })).toBeVisible();

    // The two viewers are in one swarm: bytes flow between the plugin's player and ShoalPlayer's.
    await pluginViewer.locator('#levels button', { hasText: /^all/ }).click();
    const p2pShown = async () => {
      // The ShoalPlayer page's stats panel: "0 B", "1.2 MB", …
      const text = (await playerViewer.locator('.shoal-stats-panel [data-stat="p2p-bytes"] .shoal-stats-value').textContent()) ?? '';
      const match = /^([\d.]+)\s*(B|kB|MB|GB)$/.exec(text.trim());
      const playerP2pBytes = match ? Number(match[1]) * { B: 1, kB: 1e3, MB: 1e6, GB: 1e9 }[match[2] as 'B'] : 0;
      return (await pluginView(pluginViewer)).p2pBytes + playerP2pBytes;
    };
    await expect.poll(p2pShown, { timeout: 90_000, intervals: [2_000] }).toBeGreaterThan(0);
    await expect(pluginViewer.locator('.shoal-stats-panel')).toBeVisible();
    await expect(pluginViewer.locator('.vjs-error')).toHaveCount(0);

    // Another player on the page keeps video.js's own VHS until Shoal is added to it; then its
    // source, set before, plays again through Shoal's hls.js.
    const handover = await pluginViewer.evaluate(async (src) => {
      const global = window as unknown as {
        videojs: ((element: Element, options: object) => VideoJsPlayer) & { getPlayer(id: string): VideoJsPlayer };
        ShoalVideojs: { sessionOf(player: VideoJsPlayer): unknown };
      };
      interface VideoJsPlayer {
        src(source: object): void;
        one(event: string, listener: () => void): void;
        tech(safety: object): { vhs?: unknown };
        shoal(options: object): unknown;
      }
      const element = document.createElement('video');
      element.className = 'video-js';
      element.muted = true;
      document.body.append(element);
      const other = global.videojs(element, { muted: true, autoplay: 'muted' });
      other.src({ src, type: 'application/x-mpegURL' });
      await new Promise<void>((resolve) => other.one('loadedmetadata', resolve));
      const handlers = () => ({ vhs: other.tech({ IWillNotUseThisInPlugins: true }).vhs !== undefined, shoal: global.ShoalVideojs.sessionOf(other) !== undefined });
      const before = handlers();
      other.shoal({ p2p: false });
      await new Promise<void>((resolve) => other.one('loadedmetadata', resolve));
      return { before, after: handlers() };
    }, `${stack.origin.url}/vod/master.m3u8`);
    expect(handover).toEqual({ before: { vhs: true, shoal: false }, after: { vhs: false, shoal: true } });
  } finally {
    await playerViewer.context().close();
    await pluginViewer.context().close();
  }
});

test('the plugin puts the stream’s subtitles in video.js’s captions menu, and the one picked there shows its cues', async ({ page }) => {
  await page.goto(`${stack.pages.url}/videojs-plugin.html?stream=vod&p2p=0`);
  await waitForPlaybackAdvance(page, 1);
  const showing = () =>
    page.evaluate(() => {
      const player = (window as unknown as { videojs: { getPlayer(id: string): { textTracks(): ArrayLike<TextTrack> } } }).videojs.getPlayer('video');
      const tracks = player.textTracks();
      return Array.from({ length: tracks.length }, (_, index) => tracks[index]!).filter((track) => track.mode === 'showing').map((track) => track.label);
    });
  const shownCue = () => page.evaluate(() => [...document.querySelectorAll('.vjs-text-track-display .vjs-text-track-cue')].map((cue) => cue.textContent).join(' | '));
  const pick = async (label: string) => {
    await page.locator('div.vjs-subs-caps-button').hover();
    await page.locator('div.vjs-subs-caps-button .vjs-menu-item', { hasText: label }).click();
  };
  // Paused at 31 s, inside segment 15 (30–32 s), with the control bar in view as video.js keeps it
  // while paused: the cue on screen must be that segment's.
  await page.evaluate(() => {
    const player = (window as unknown as { videojs: { getPlayer(id: string): { pause(): void; currentTime(seconds: number): void } } }).videojs.getPlayer('video');
    player.pause();
    player.currentTime(31);
  });

  // video.js's own menu lists hls.js's two renditions beside its "off" and settings items.
  await expect(page.locator('div.vjs-subs-caps-button')).toBeVisible();
  await expect(page.locator('.vjs-subs-caps-button .vjs-menu-item .vjs-menu-item-text')).toContainText(['English', 'Français']);
  expect(await showing()).toEqual([]);
  await pick('English');
  expect(await showing()).toEqual(['English']);
  await expect.poll(shownCue, { timeout: 20_000 }).toBe('English cue 15');
  await pick('Français');
  expect(await showing()).toEqual(['Français']);
  await expect.poll(shownCue, { timeout: 20_000 }).toBe('Sous-titre 15');
  await expect(page.locator('.vjs-error')).toHaveCount(0);
});
