// @shoal/player in real Chromium: the script-tag embed and the iframe embed play, two viewers
// share segments and a stats view shows it, and the iframe's postMessage API answers every
// command and emits every event.
import { expect, test, type Browser, type Frame, type Page } from '@playwright/test';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { waitForPlaybackAdvance } from '../src/page-probes.js';

let stack: DemoStack;
test.beforeAll(async () => {
  stack = await startDemoStack();
});
test.afterAll(async () => {
  await stack?.close();
});

interface HostEvent {
  event: string;
  data?: { p2pBytes?: number; currentTimeS?: number; message?: string; code?: string } | null;
}

const scriptPage = (query = '') => `${stack.pages.url}/embed-script.html${query}`;
const iframePage = (query = '') => `${stack.pages.url}/embed-iframe.html${query}`;

/** The embed.html frame inside the host page, once it exists. */
async function playerFrame(page: Page): Promise<Frame> {
  await expect.poll(() => page.frames().some((frame) => frame.url().includes('/embed.html'))).toBe(true);
  return page.frames().find((frame) => frame.url().includes('/embed.html'))!;
}

/** Opens the iframe host page and waits for its module script to set up `shoalHost`. */
async function openIframeHost(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => 'shoalHost' in window);
}

async function hostEvents(page: Page): Promise<HostEvent[]> {
  return page.evaluate(() => (window as unknown as { shoalHost: { events: HostEvent[] } }).shoalHost.events);
}

async function frameVideo(frame: Frame) {
  // The frame may still be building its player: no <video> yet reads as "not started".
  const notStarted = { currentTime: 0, paused: true, volume: 1, muted: false, error: false };
  return frame.evaluate(() => {
    const video = document.querySelector('video');
    const error = document.querySelector('.vjs-error') !== null;
    if (!video) return { currentTime: 0, paused: true, volume: 1, muted: false, error };
    return { currentTime: video.currentTime, paused: video.paused, volume: video.volume, muted: video.muted, error };
  }).catch((error: Error) => {
    // A frame that is still navigating has no document to ask yet.
    if (/Execution context was destroyed|frame was detached/i.test(error.message)) return notStarted;
    throw error;
  });
}

/** Bytes from peers as the open stats panel shows them ("0 B", "1.2 MB", …). */
async function panelP2pText(target: Page | Frame): Promise<string> {
  return (await target.locator('.shoal-stats-panel [data-stat="p2p-bytes"] .shoal-stats-value').textContent()) ?? '';
}

async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  return context.newPage();
}

test('the script-tag embed turns its div into a player that plays', async ({ page }) => {
  await page.goto(scriptPage('?stream=vod'));
  await expect(page.locator('[data-shoal-src] .video-js')).toBeVisible();
  const { advancedS } = await waitForPlaybackAdvance(page, 4);
  expect(advancedS).toBeGreaterThanOrEqual(4);
  await expect(page.locator('.vjs-error')).toHaveCount(0);
  const stats = await page.evaluate(() => {
    const global = (window as unknown as { ShoalPlayer: { playerOf(element: Element): { getStats(): { playback: string; httpBytes: number } } } }).ShoalPlayer;
    return global.playerOf(document.querySelector('[data-shoal-src]')!).getStats();
  });
  expect(stats.playback).toBe('hls.js');
  expect(stats.httpBytes).toBeGreaterThan(0);
});

test('the iframe embed plays and reports stats to the host page', async ({ page }) => {
  await openIframeHost(page, iframePage('?stream=vod'));
  const frame = await playerFrame(page);
  await expect.poll(async () => (await frameVideo(frame)).currentTime, { timeout: 60_000 }).toBeGreaterThan(4);
  const events = await hostEvents(page);
  expect(events.some((event) => event.event === 'ready')).toBe(true);
  expect(events.filter((event) => event.event === 'stats').length).toBeGreaterThanOrEqual(2);
});

test('two embeds of the live stream share segments, and a stats view shows bytes from peers', async ({ browser }) => {
  const scriptViewer = await newPage(browser);
  const frameViewer = await newPage(browser);
  try {
    await scriptViewer.goto(scriptPage('?stream=live'));
    await waitForPlaybackAdvance(scriptViewer, 2);
    await frameViewer.goto(iframePage('?stream=live'));
    const frame = await playerFrame(frameViewer);
    const parseBytes = (text: string) => {
      const match = /^([\d.]+)\s*(B|kB|MB|GB)$/.exec(text.trim());
      return match ? Number(match[1]) * { B: 1, kB: 1e3, MB: 1e6, GB: 1e9 }[match[2] as 'B'] : 0;
    };
    await expect
      .poll(async () => Math.max(parseBytes(await panelP2pText(scriptViewer)), parseBytes(await panelP2pText(frame))), { timeout: 90_000, intervals: [2_000] })
      .toBeGreaterThan(0);
    expect((await frameVideo(frame)).error).toBe(false);
  } finally {
    await scriptViewer.context().close();
    await frameViewer.context().close();
  }
});

test('the postMessage API round-trips every command and emits every event', async ({ page }) => {
  await openIframeHost(page, iframePage('?stream=vod'));
  const frame = await playerFrame(page);
  const call = (command: string, arg?: number) =>
    page.evaluate(
      async ([name, value]) => {
        const client = (window as unknown as { shoalHost: { client: Record<string, (arg?: number) => Promise<unknown>> } }).shoalHost.client;
        return client[name as string]!(value as number | undefined);
      },
      [command, arg] as const,
    );
  const waitEvent = (name: string, after = 0) =>
    expect.poll(async () => (await hostEvents(page)).slice(after).some((event) => event.event === name), { timeout: 30_000 }).toBe(true);

  await waitEvent('ready');
  await waitEvent('playing');
  await expect.poll(async () => (await frameVideo(frame)).currentTime, { timeout: 60_000 }).toBeGreaterThan(1);

  let mark = (await hostEvents(page)).length;
  await call('pause');
  await waitEvent('pause', mark);
  expect((await frameVideo(frame)).paused).toBe(true);

  mark = (await hostEvents(page)).length;
  await call('play');
  await waitEvent('playing', mark);
  expect((await frameVideo(frame)).paused).toBe(false);

  await call('setVolume', 0.5);
  expect(await frameVideo(frame)).toMatchObject({ volume: 0.5, muted: false });

  const stats = (await call('getStats')) as { playback: string; httpBytes: number; currentTimeS: number; p2p: string };
  expect(stats.playback).toBe('hls.js');
  expect(stats.httpBytes).toBeGreaterThan(0);
  expect(stats.p2p).toBe('on');

  // Seek to just before the end of the 60 s VOD: the frame reports `ended`.
  mark = (await hostEvents(page)).length;
  await call('seek', 57);
  await expect.poll(async () => (await frameVideo(frame)).currentTime, { timeout: 10_000 }).toBeGreaterThanOrEqual(57);
  await waitEvent('ended', mark);

  // A command the player refuses comes back as an error, not as silence.
  const refused = await page.evaluate(async () => {
    const client = (window as unknown as { shoalHost: { client: { setVolume(volume: number): Promise<void> } } }).shoalHost.client;
    return client.setVolume(7).then(
      () => 'accepted',
      (error: Error) => error.message,
    );
  });
  expect(refused).toContain('INVALID_OPTION');
});

test('a stream that cannot load shows the error overlay and emits `error` to the host', async ({ page }) => {
  await openIframeHost(page, iframePage('?stream=vod'));
  await page.evaluate((url) => {
    const host = (window as unknown as { shoalHost: { events: HostEvent[] } }).shoalHost;
    host.events.length = 0;
    const iframe = document.querySelector('iframe')!;
    iframe.src = `/lib/shoal-player/embed.html?src=${encodeURIComponent(url)}&autoplay=1&muted=1`;
  }, `${stack.origin.url}/missing/master.m3u8`);
  await expect.poll(async () => (await hostEvents(page)).find((event) => event.event === 'error')?.data?.message ?? '', { timeout: 30_000 }).toContain('could not be loaded');
  const frame = page.frames().find((candidate) => candidate.url().includes('missing'))!;
  await expect(frame.locator('.vjs-error .vjs-error-display .vjs-modal-dialog-content')).toContainText('could not be loaded');
});
