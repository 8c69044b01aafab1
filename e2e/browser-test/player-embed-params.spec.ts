// The embeds' playback parameters in real Chromium, on the VOD sample stream: embed.html's
// `start`, `stop`, `loop`, `controls`, `title` and `subtitle` (the names PeerTube's embed uses),
// and the same settings as a script-tag embed's data-attributes. Each is checked by what a viewer
// would see: where playback began (the media element's played ranges), where it paused or started
// again, the control bar, the title over the video, and the subtitle on screen. On the live
// stream, whose timeline has no fixed start or end, start/stop/loop change nothing.
import { expect, test, type Frame, type Page } from '@playwright/test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { startStaticServer, type StaticServer } from '../src/static-server.js';

let stack: DemoStack;
let hostDir: string;
let hosts: StaticServer;
test.beforeAll(async () => {
  stack = await startDemoStack();
  hostDir = mkdtempSync(join(tmpdir(), 'shoal-params-'));
  hosts = await startStaticServer({ mounts: { '/': hostDir } });
});
test.afterAll(async () => {
  await Promise.all([stack?.close(), hosts?.close()]);
  rmSync(hostDir, { recursive: true, force: true });
});

function hostPage(name: string, body: string, head = ''): string {
  writeFileSync(join(hostDir, name), `<!doctype html><html><head><meta charset="utf-8"><title>host</title>${head}</head><body>${body}</body></html>`);
  return `${hosts.url}/${name}`;
}

const vod = () => `${stack.origin.url}/vod/master.m3u8`;
const frameTag = (name: string, params: Record<string, string>, src = vod()) =>
  `<iframe name="${name}" title="Video player" width="480" height="270" allow="autoplay" src="${stack.pages.url}/lib/shoal-player/embed.html?${new URLSearchParams({ src, autoplay: '1', muted: '1', ...params })}"></iframe>`;

async function frameNamed(page: Page, name: string): Promise<Frame> {
  await expect.poll(() => page.frames().some((frame) => frame.name() === name)).toBe(true);
  return page.frames().find((frame) => frame.name() === name)!;
}

/** Where the player's <video> is, and every range it has played (seconds). */
const videoState = (target: Page | Frame) =>
  target.evaluate(() => {
    const video = document.querySelector('video');
    if (!video) return { currentTime: 0, paused: true, ended: false, played: [] as Array<[number, number]> };
    const played = Array.from({ length: video.played.length }, (_, index): [number, number] => [video.played.start(index), video.played.end(index)]);
    return { currentTime: video.currentTime, paused: video.paused, ended: video.ended, played };
  });

const shownCue = (target: Page | Frame) =>
  target.evaluate(() => [...document.querySelectorAll('.vjs-text-track-display .vjs-text-track-cue')].map((cue) => cue.textContent).join(' | '));

test('embed.html’s start, stop, loop, controls, title and subtitle parameters take effect', async ({ page }) => {
  await page.goto(
    hostPage(
      'params-host.html',
      [
        frameTag('titled', { start: '20', controls: '0', title: 'Launch day — live', subtitle: 'fr' }),
        frameTag('stopping', { start: '0:04', stop: '7s' }),
        frameTag('looping', { start: '55', loop: '1' }),
      ].join('\n'),
    ),
  );
  const titled = await frameNamed(page, 'titled');
  const stopping = await frameNamed(page, 'stopping');
  const looping = await frameNamed(page, 'looping');
  await looping.waitForSelector('video');
  // Records, in the looping frame, the furthest point reached and whether playback came back from it.
  await looping.evaluate(() => {
    const video = document.querySelector('video')!;
    const seen = { furthest: 0, cameBack: false };
    Object.assign(window, { loopSeen: seen });
    video.addEventListener('timeupdate', () => {
      seen.furthest = Math.max(seen.furthest, video.currentTime);
      if (seen.furthest > 59 && video.currentTime < 58) seen.cameBack = true;
    });
  });

  // start=20: playback begins at 20 s, never at 0.
  await expect.poll(async () => (await videoState(titled)).currentTime, { timeout: 30_000 }).toBeGreaterThan(21);
  const { played } = await videoState(titled);
  expect(played.length).toBeGreaterThan(0);
  for (const [from] of played) expect(from).toBeGreaterThanOrEqual(19.9);
  // title: shown across the top of the video, and the frame page's own title.
  await expect(titled.locator('.video-js .shoal-title-bar')).toHaveText('Launch day — live');
  expect(await titled.title()).toBe('Launch day — live');
  // controls=0: no control bar, no big play button.
  await expect(titled.locator('.video-js')).toHaveClass(/vjs-controls-disabled/);
  await expect(titled.locator('.vjs-control-bar')).toBeHidden();
  await expect(titled.locator('.vjs-big-play-button')).toBeHidden();
  // subtitle=fr: the French rendition shows from the start, the cue of the segment playing.
  await expect.poll(() => shownCue(titled), { timeout: 20_000 }).toMatch(/^Sous-titre (1\d|2\d)$/);
  const { currentTime } = await videoState(titled);
  const cue = Number(/\d+$/.exec(await shownCue(titled))![0]);
  expect(Math.abs(cue - Math.floor(currentTime / 2))).toBeLessThanOrEqual(1);

  // start=0:04&stop=7s: pauses at 7 s (timeupdate comes every quarter second or so).
  await expect.poll(async () => (await videoState(stopping)).paused && (await videoState(stopping)).currentTime > 6, { timeout: 30_000 }).toBe(true);
  const stopped = await videoState(stopping);
  expect(stopped.currentTime).toBeGreaterThanOrEqual(7);
  expect(stopped.currentTime).toBeLessThan(8);
  for (const [from] of stopped.played) expect(from).toBeGreaterThanOrEqual(3.9);

  // start=55&loop=1: at the end (60 s) playback starts again at 55 s, not at 0, and goes on.
  await expect.poll(() => looping.evaluate(() => (window as unknown as { loopSeen: { cameBack: boolean } }).loopSeen.cameBack), { timeout: 30_000 }).toBe(true);
  const looped = await videoState(looping);
  expect(looped.ended).toBe(false);
  expect(looped.currentTime).toBeGreaterThanOrEqual(54.9);
  await expect.poll(async () => (await videoState(looping)).paused).toBe(false);
  for (const [from] of looped.played) expect(from).toBeGreaterThanOrEqual(54.9);
});

test('on the live stream start, stop and loop change nothing, and the duration is Infinity', async ({ page }) => {
  const live = `${stack.origin.url}/live/master.m3u8`;
  await page.goto(
    hostPage('params-live.html', frameTag('live', { start: '1', stop: '2', loop: '1' }, live), `<script src="${stack.pages.url}/lib/shoal-player/shoal-frame-client.min.js"></script>`),
  );
  const frame = await frameNamed(page, 'live');
  await expect.poll(async () => (await videoState(frame)).currentTime, { timeout: 30_000 }).toBeGreaterThan(0);
  const first = await videoState(frame);
  // Live playback begins well past 2 s: a stop there would have paused it at once, a loop sent it back. It plays on.
  await expect.poll(async () => (await videoState(frame)).currentTime - first.currentTime, { timeout: 30_000 }).toBeGreaterThan(4);
  expect((await videoState(frame)).paused).toBe(false);
  const duration = await page.evaluate(async () => {
    const client = new (window as unknown as { ShoalFrameClient: new (iframe: HTMLIFrameElement) => { ready(): Promise<unknown>; getDuration(): Promise<number> } }).ShoalFrameClient(document.querySelector('iframe')!);
    await client.ready();
    return client.getDuration();
  });
  expect(duration).toBe(Number.POSITIVE_INFINITY);
});

test('the script-tag embed takes the same settings as data-attributes', async ({ page }) => {
  await page.goto(
    hostPage(
      'params-div.html',
      `<div style="width: 480px" data-shoal-src="${vod()}" data-shoal-autoplay data-shoal-muted data-shoal-start="30" data-shoal-controls="off"
            data-shoal-title="From the div" data-shoal-subtitle="en"></div>`,
      `<script src="${stack.pages.url}/lib/shoal-player/shoal-player.min.js" defer></script>`,
    ),
  );
  await expect.poll(async () => (await videoState(page)).currentTime, { timeout: 30_000 }).toBeGreaterThan(31);
  for (const [from] of (await videoState(page)).played) expect(from).toBeGreaterThanOrEqual(29.9);
  await expect(page.locator('.shoal-title-bar')).toHaveText('From the div');
  await expect(page.locator('.vjs-control-bar')).toBeHidden();
  await expect.poll(() => shownCue(page), { timeout: 20_000 }).toMatch(/^English cue (1[5-9]|2\d)$/);
});
