// The iframe embed against pages of other origins, in real Chromium: with `?origin=` the frame takes
// commands from that origin only and posts its events to it alone, so a hostile page that frames
// embed.html can neither drive the player nor read it; the frame client believes only messages of
// the player's origin, so a frame navigated to a hostile page cannot speak for the player; and
// embed.html's own Content-Security-Policy lets the player, hls.js, the tracker and the origin work.
import { expect, test, type Frame, type Page } from '@playwright/test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { startStaticServer, type StaticServer } from '../src/static-server.js';

let stack: DemoStack;
let hostDir: string;
/** Two sites besides the player's: the legitimate host and a hostile one. */
let site: StaticServer;
let hostile: StaticServer;
test.beforeAll(async () => {
  stack = await startDemoStack();
  hostDir = mkdtempSync(join(tmpdir(), 'shoal-origin-hosts-'));
  site = await startStaticServer({ mounts: { '/': hostDir } });
  hostile = await startStaticServer({ mounts: { '/': hostDir } });
});
test.afterAll(async () => {
  await Promise.all([stack?.close(), site?.close(), hostile?.close()]);
  rmSync(hostDir, { recursive: true, force: true });
});

function writePage(name: string, html: string): string {
  writeFileSync(join(hostDir, name), html);
  return name;
}

const embedUrl = (extra: Record<string, string>) =>
  `${stack.pages.url}/lib/shoal-player/embed.html?${new URLSearchParams({ src: `${stack.origin.url}/vod/master.m3u8`, tracker: stack.tracker.url, autoplay: '1', muted: '1', ...extra })}`;

/** A host page that records every message the frame posts to it, and can post raw commands. */
const recordingHost = (frameUrl: string) => `<!doctype html><html><head><meta charset="utf-8"><title>host</title>
  <script src="${stack.pages.url}/lib/shoal-player/shoal-frame-client.min.js"></script></head><body>
  <script>
    window.received = [];
    addEventListener('message', (event) => { if (event.data?.shoal === 'player') received.push(event.data); });
    window.command = (id, command, args) => document.querySelector('iframe').contentWindow.postMessage({ shoal: 'player', kind: 'command', id, command, args }, '*');
  </script>
  <iframe title="Video player" width="640" height="360" allow="autoplay" src="${frameUrl}"></iframe></body></html>`;

async function frameOf(page: Page): Promise<Frame> {
  await expect.poll(() => page.frames().some((frame) => frame.url().includes('/embed.html'))).toBe(true);
  return page.frames().find((frame) => frame.url().includes('/embed.html'))!;
}

const videoState = (frame: Frame) => frame.evaluate(() => ({ currentTime: document.querySelector('video')?.currentTime ?? 0, paused: document.querySelector('video')?.paused ?? true, volume: document.querySelector('video')?.volume ?? -1 }));

test('with ?origin= a page of another origin that frames embed.html gets no events and its commands are ignored; the pinned host drives it', async ({ page, context }) => {
  const pinned = embedUrl({ origin: site.url });
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  writePage('framing.html', recordingHost(pinned));

  // The hostile page frames the player as the site's embed code does, and tries to drive it.
  await page.goto(`${hostile.url}/framing.html`);
  const frame = await frameOf(page);
  await expect.poll(() => videoState(frame).then((state) => state.currentTime), { timeout: 30_000 }).toBeGreaterThan(1);
  await page.evaluate(() => {
    const command = (window as unknown as { command: (id: number, name: string, args?: object) => void }).command;
    command(1, 'hello');
    command(2, 'pause');
    command(3, 'setVolume', { volume: 0.25 });
    command(4, 'getStats');
  });
  await page.waitForTimeout(2_000);
  const state = await videoState(frame);
  expect(state.paused, 'the hostile page paused the player').toBe(false);
  expect(state.volume).toBe(1);
  // Not a response, not a `ready`, not a `status`: everything went to the pinned origin only.
  expect(await page.evaluate(() => (window as unknown as { received: unknown[] }).received)).toEqual([]);

  // The same page on the pinned origin: ready, commands and events work.
  const legit = await context.newPage();
  await legit.goto(`${site.url}/framing.html`);
  const legitFrame = await frameOf(legit);
  const result = await legit.evaluate(async () => {
    const global = window as unknown as { ShoalFrameClient: new (iframe: HTMLIFrameElement) => Record<string, (...args: unknown[]) => Promise<unknown>> };
    const client = new global.ShoalFrameClient(document.querySelector('iframe')!);
    const ready = await client.ready!();
    await client.setVolume!(0.25);
    await client.pause!();
    return { ready, volume: await client.getVolume!() };
  });
  expect(result).toMatchObject({ ready: { src: `${stack.origin.url}/vod/master.m3u8`, playback: 'hls.js' }, volume: 0.25 });
  expect((await videoState(legitFrame)).paused).toBe(true);
  expect(await legit.evaluate(() => (window as unknown as { received: Array<{ kind: string }> }).received.some((message) => message.kind === 'event'))).toBe(true);
  // embed.html's own CSP let the player, hls.js's worker, the origin and the tracker work.
  expect(violations).toEqual([]);
});

test('a frame client ignores a hostile page its iframe was navigated to, though the iframe still names the player', async ({ page }) => {
  writePage(
    'impostor.html',
    `<!doctype html><html><head><meta charset="utf-8"><title>impostor</title></head><body><script>
      // Speaks the player's protocol: a ready of its own, and an answer to every command id.
      setInterval(() => {
        parent.postMessage({ shoal: 'player', kind: 'event', event: 'ready', data: { src: 'https://evil.example/fake.m3u8', p2p: 'on', playback: 'hls.js' } }, '*');
        for (let id = 1; id <= 20; id += 1) parent.postMessage({ shoal: 'player', kind: 'response', id, ok: true, result: 'from the impostor' }, '*');
      }, 100);
    </script></body></html>`,
  );
  writePage('client-host.html', recordingHost(embedUrl({ origin: site.url })));
  await page.goto(`${site.url}/client-host.html`);
  const frame = await frameOf(page);
  // Something (a script in the frame, a redirect) took the frame to another origin; its src attribute did not change.
  await frame.goto(`${hostile.url}/impostor.html`);
  const seen = await page.evaluate(async () => {
    const global = window as unknown as { ShoalFrameClient: new (iframe: HTMLIFrameElement, options: object) => Record<string, (...args: unknown[]) => Promise<unknown>> };
    const client = new global.ShoalFrameClient(document.querySelector('iframe')!, { timeoutMs: 1_500 });
    const events: unknown[] = [];
    (client.on as unknown as (name: string, listener: (data: unknown) => void) => void)('ready', (data) => events.push(data));
    const ready = client.ready!().then((info) => ({ info }), (error: Error) => ({ error: error.message }));
    const time = await client.getCurrentTime!().then((value) => ({ value }), (error: Error) => ({ error: error.message }));
    const readyOrNothing = await Promise.race([ready, new Promise((resolve) => setTimeout(() => resolve('no ready'), 500))]);
    return { events, time, readyOrNothing };
  });
  expect(seen.events).toEqual([]);
  expect(seen.readyOrNothing).toBe('no ready');
  expect(seen.time).toEqual({ error: expect.stringMatching(/^FRAME_TIMEOUT/) });
});
