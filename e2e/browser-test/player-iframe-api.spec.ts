// The iframe embed's API in real Chromium, from a host page of its own: a ShoalFrameClient created
// 2 s after the frame said `ready` still gets `ready`, and every method and event of the API does
// what it says; every command gets an answer (unknown and malformed ones an error that says why,
// a frame that could not start its start-up error, through ready() too); the stream's subtitles
// are listed and shown through the frame; destroy stops the player. (The embed snippets with ICE
// servers under a CSP: player-snippets.spec.ts.)
import { expect, test, type Frame, type Page } from '@playwright/test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { startStaticServer, type StaticServer } from '../src/static-server.js';

let stack: DemoStack;
/** The host pages: another site (origin) than the player's, as on the web. */
let hostDir: string;
let hosts: StaticServer;
test.beforeAll(async () => {
  stack = await startDemoStack();
  hostDir = mkdtempSync(join(tmpdir(), 'shoal-hosts-'));
  hosts = await startStaticServer({ mounts: { '/': hostDir } });
});
test.afterAll(async () => {
  await Promise.all([stack?.close(), hosts?.close()]);
  rmSync(hostDir, { recursive: true, force: true });
});

/** Serves `html` as a host page (from loopback, like the player: Chromium keeps public pages off loopback). */
function hostPage(name: string, html: string): string {
  writeFileSync(join(hostDir, name), html);
  return `${hosts.url}/${name}`;
}

const embedQuery = (stream: 'vod' | 'live', extra: Record<string, string> = {}) =>
  new URLSearchParams({ src: `${stack.origin.url}/${stream}/master.m3u8`, tracker: stack.tracker.url, autoplay: '1', muted: '1', ...extra });

async function frameOf(page: Page): Promise<Frame> {
  await expect.poll(() => page.frames().some((frame) => frame.url().includes('/embed.html'))).toBe(true);
  return page.frames().find((frame) => frame.url().includes('/embed.html'))!;
}

test('a frame client created 2 s after `ready` still gets it, and every method and event of the iframe API works', async ({ page }) => {
  await page.goto(
    hostPage(
      'iframe-host.html',
      `<!doctype html><html><head><meta charset="utf-8"><title>host</title>
        <script src="${stack.pages.url}/lib/shoal-player/shoal-frame-client.min.js"></script></head><body>
        <script>
          window.rawEvents = [];
          addEventListener('message', (event) => { if (event.data?.shoal === 'player' && event.data.kind === 'event') rawEvents.push(event.data.event); });
        </script>
        <iframe title="Video player" width="640" height="360" allow="autoplay; fullscreen" src="${stack.pages.url}/lib/shoal-player/embed.html?${embedQuery('vod')}"></iframe>
      </body></html>`,
    ),
  );
  const frame = await frameOf(page);
  await expect.poll(() => page.evaluate(() => (window as unknown as { rawEvents: string[] }).rawEvents.includes('ready')), { timeout: 30_000 }).toBe(true);
  await page.waitForTimeout(2_000);

  // The client arrives late: it asks, and the frame answers with what `ready` said.
  const readyInfo = await page.evaluate(async () => {
    const global = window as unknown as { ShoalFrameClient: new (iframe: HTMLIFrameElement) => Record<string, (...args: unknown[]) => unknown>; client: unknown; seen: Record<string, unknown[]> };
    const client = new global.ShoalFrameClient(document.querySelector('iframe')!);
    global.client = client;
    global.seen = {};
    for (const name of ['ready', 'playing', 'pause', 'ended', 'error', 'stats', 'statechange', 'status', 'volumechange', 'ratechange', 'resolutionchange', 'captionchange']) {
      client.on!(name, (data: unknown) => (global.seen[name] ??= []).push(data));
    }
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('no ready within 5 s')), 5_000));
    return Promise.race([client.ready!(), timeout]);
  });
  expect(readyInfo).toMatchObject({ src: `${stack.origin.url}/vod/master.m3u8`, playback: 'hls.js', p2p: 'on' });

  const call = (name: string, ...args: unknown[]) =>
    page.evaluate(([method, values]) => (window as unknown as { client: Record<string, (...a: unknown[]) => Promise<unknown>> }).client[method as string]!(...(values as unknown[])), [name, args] as const);
  const seen = (name: string) => page.evaluate((event) => (window as unknown as { seen: Record<string, unknown[]> }).seen[event] ?? [], name);
  const lastSeen = async (name: string) => (await seen(name)).at(-1);
  const video = () => frame.evaluate(() => {
    const element = document.querySelector('video')!;
    return { currentTime: element.currentTime, paused: element.paused, volume: element.volume, muted: element.muted, playbackRate: element.playbackRate };
  });

  await expect.poll(() => call('getState'), { timeout: 30_000 }).toBe('playing');
  await expect.poll(() => call('getCurrentTime') as Promise<number>).toBeGreaterThan(0.5);
  expect(await call('getDuration')).toBeCloseTo(60, 0);
  // `status` comes twice a second with where playback is.
  await expect.poll(async () => (await seen('status')).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
  expect(await lastSeen('status')).toMatchObject({ state: 'playing', duration: expect.closeTo(60, 0), muted: true, playbackRate: 1 });

  await call('pause');
  await expect.poll(() => lastSeen('statechange')).toEqual({ state: 'paused' });
  expect((await seen('pause')).length).toBeGreaterThanOrEqual(1);
  expect(await call('getState')).toBe('paused');
  expect((await video()).paused).toBe(true);
  await call('play');
  await expect.poll(() => lastSeen('statechange')).toEqual({ state: 'playing' });
  expect((await seen('playing')).length).toBeGreaterThanOrEqual(1);

  await call('setVolume', 0.3);
  await expect.poll(() => lastSeen('volumechange')).toEqual({ volume: 0.3, muted: false });
  expect(await call('getVolume')).toBeCloseTo(0.3);
  await call('mute');
  expect(await call('isMuted')).toBe(true);
  await expect.poll(() => lastSeen('volumechange')).toEqual({ volume: 0.3, muted: true });
  await call('unmute');
  expect(await call('isMuted')).toBe(false);
  expect(await video()).toMatchObject({ volume: 0.3, muted: false });

  expect(await call('getPlaybackRates')).toEqual([0.5, 0.75, 1, 1.25, 1.5, 2]);
  await call('setPlaybackRate', 1.5);
  await expect.poll(() => lastSeen('ratechange')).toEqual({ playbackRate: 1.5 });
  expect(await call('getPlaybackRate')).toBe(1.5);
  expect((await video()).playbackRate).toBe(1.5);
  await call('setPlaybackRate', 1);

  const resolutions = (await call('getResolutions')) as Array<{ id: number; label: string; height: number; active: boolean }>;
  expect(resolutions.map((resolution) => resolution.label)).toEqual(['Auto', '360p', '180p']);
  expect(resolutions[0]).toMatchObject({ id: -1, active: true });
  const lowest = resolutions.find((resolution) => resolution.height === 180)!;
  await call('setResolution', lowest.id);
  await expect
    .poll(async () => ((await lastSeen('resolutionchange')) as { resolutions: typeof resolutions } | undefined)?.resolutions.find((resolution) => resolution.active)?.height)
    .toBe(180);
  await expect.poll(async () => ((await call('getStats')) as { rendition: { height: number } | null }).rendition?.height, { timeout: 30_000 }).toBe(180);
  await expect.poll(async () => ((await lastSeen('status')) as { resolutionId: number }).resolutionId).toBe(lowest.id);
  await call('setResolution', -1);

  const stats = (await call('getStats')) as { playback: string; httpBytes: number };
  expect(stats).toMatchObject({ playback: 'hls.js' });
  expect(stats.httpBytes).toBeGreaterThan(0);
  expect((await seen('stats')).length).toBeGreaterThanOrEqual(1);

  // Commands the player refuses come back as errors that name the problem.
  const refusal = (name: string, arg: unknown) =>
    page.evaluate(([method, value]) => (window as unknown as { client: Record<string, (a: unknown) => Promise<unknown>> }).client[method as string]!(value).then(() => 'accepted', (error: Error) => error.message), [name, arg] as const);
  // The frame's code once, then its words: not `FRAME_COMMAND: INVALID_OPTION: INVALID_OPTION: …`.
  expect(await refusal('setPlaybackRate', 40)).toBe('FRAME_COMMAND: INVALID_OPTION: setPlaybackRate: 40 is not between 0.0625 and 16');
  expect(await refusal('setResolution', 9)).toBe('FRAME_COMMAND: INVALID_OPTION: resolution: 9 is not -1 (auto) or a level index below 2');

  // Near the end of the 60 s VOD: `ended`, and the state says so.
  await call('seek', 58.5);
  await expect.poll(() => lastSeen('statechange'), { timeout: 15_000 }).toEqual({ state: 'ended' });
  expect((await seen('ended')).length).toBe(1);
  expect(await call('getState')).toBe('ended');
  expect(await seen('error')).toEqual([]);
});

/** A host page with the frame client, recording every answer the frame posts, and a way to post raw commands. */
function apiHost(name: string, iframes: string): string {
  return hostPage(
    name,
    `<!doctype html><html><head><meta charset="utf-8"><title>host</title>
      <script src="${stack.pages.url}/lib/shoal-player/shoal-frame-client.min.js"></script></head><body>
      <script>
        window.answers = [];
        addEventListener('message', (event) => { if (event.data?.shoal === 'player' && event.data.kind === 'response') answers.push(event.data); });
        window.sendRaw = (message, index = 0) => document.querySelectorAll('iframe')[index].contentWindow.postMessage({ shoal: 'player', kind: 'command', ...message }, '*');
      </script>
      ${iframes}
    </body></html>`,
  );
}

const frameTag = (query: URLSearchParams | string) => `<iframe title="Video player" width="480" height="270" allow="autoplay" src="${stack.pages.url}/lib/shoal-player/embed.html?${query}"></iframe>`;

interface RawAnswer {
  id: number | null;
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
}

type HostWindow = {
  ShoalFrameClient: new (iframe: HTMLIFrameElement) => Record<string, (...args: unknown[]) => Promise<unknown>>;
  clients: Array<Record<string, (...args: unknown[]) => Promise<unknown>>>;
  answers: RawAnswer[];
  sendRaw(message: object, index?: number): void;
};

/** Creates a client on the index-th iframe and waits for ready(): its result, or its error as { code, message, frameError }. */
const readyOf = (page: Page, index = 0) =>
  page.evaluate(async (frameIndex) => {
    const host = window as unknown as HostWindow;
    host.clients ??= [];
    const client = new host.ShoalFrameClient(document.querySelectorAll('iframe')[frameIndex]!);
    host.clients[frameIndex] = client;
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('ready() did not settle within 15 s')), 15_000));
    try {
      return { ready: await Promise.race([client.ready!(), timeout]) };
    } catch (error) {
      const { code, message, frameError } = error as { code?: string; message: string; frameError?: unknown };
      return { failed: { code, message, frameError } };
    }
  }, index);

/** Calls a client method on the host page: its result, or its error's message. */
const callOn = (page: Page, index: number, method: string, ...args: unknown[]): Promise<{ result?: unknown; error?: string }> =>
  page.evaluate(
    ([frameIndex, name, values]) =>
      (window as unknown as HostWindow).clients[frameIndex as number]![name as string]!(...(values as unknown[])).then(
        (result) => ({ result }),
        (error: Error) => ({ error: error.message }),
      ),
    [index, method, args] as const,
  );

test('every command gets an answer: an unknown name lists the known commands, a malformed command says what is missing', async ({ page }) => {
  await page.goto(apiHost('answers-host.html', frameTag(new URLSearchParams({ src: `${stack.origin.url}/vod/master.m3u8`, muted: '1' }))));
  expect(await readyOf(page)).toMatchObject({ ready: { playback: 'hls.js', p2p: 'off' } });
  await page.evaluate(() => {
    const host = window as unknown as HostWindow;
    host.sendRaw({ id: 101, command: 'isPlayng' });
    host.sendRaw({ id: 102, command: 'isPlaying' });
    host.sendRaw({ id: 103, command: 'getCaptions' });
    host.sendRaw({ command: 'play' });
    host.sendRaw({ id: 105, command: 7 });
  });
  const answers = () => page.evaluate(() => (window as unknown as HostWindow).answers.filter((answer) => answer.id === null || answer.id > 100));
  await expect.poll(async () => (await answers()).length, { timeout: 5_000, message: 'an answer to each of the 5 commands' }).toBe(5);
  const byId = new Map((await answers()).map((answer) => [answer.id, answer]));
  expect(byId.get(101)).toMatchObject({ ok: false, error: { code: 'UNKNOWN_COMMAND' } });
  expect(byId.get(101)!.error!.message).toMatch(/^"isPlayng" is not a command of this player; the commands are hello, play, pause, seek, .*isPlaying.*getCaptions, setCaption, destroy$/);
  expect(byId.get(102)).toEqual({ shoal: 'player', kind: 'response', id: 102, ok: true, result: false });
  expect(byId.get(103)).toMatchObject({ ok: true, result: [{ label: 'English', language: 'en', kind: 'subtitles', mode: 'disabled' }, { label: 'Français', language: 'fr' }] });
  expect(byId.get(null)).toMatchObject({ ok: false, error: { code: 'INVALID_COMMAND', message: 'play: a command needs a numeric `id`, which its answer carries back' } });
  expect(byId.get(105)).toMatchObject({ ok: false, error: { code: 'INVALID_COMMAND', message: 'a command needs its name as a string in `command`, got 7' } });
});

test('a frame that cannot start makes ready() reject with its start-up error, for clients made before and after it loaded', async ({ page }) => {
  const noSource = frameTag(new URLSearchParams({ tracker: stack.tracker.url }));
  const badStart = frameTag(new URLSearchParams({ src: `${stack.origin.url}/vod/master.m3u8`, start: 'soon' }));
  await page.goto(apiHost('failed-host.html', `${noSource}${badStart}`));
  // The first client exists before its frame has loaded; the second arrives long after.
  const early = readyOf(page, 0);
  await page.waitForTimeout(2_000);
  const late = readyOf(page, 1);
  const srcError = 'src: expected the URL of an HLS manifest (.m3u8)';
  expect(await early).toEqual({ failed: { code: 'FRAME_START', message: `FRAME_START: INVALID_OPTION: ${srcError}`, frameError: { code: 'INVALID_OPTION', message: srcError } } });
  const startError = 'start (embed.html parameter): expected seconds (90), a duration (1m30s) or a clock time (1:30), got "soon"';
  expect(await late).toEqual({ failed: { code: 'FRAME_START', message: `FRAME_START: INVALID_OPTION: ${startError}`, frameError: { code: 'INVALID_OPTION', message: startError } } });
  // Commands are answered too, with the same reason.
  expect(await callOn(page, 0, 'play')).toEqual({ error: `FRAME_COMMAND: INVALID_OPTION: ${srcError}` });
  await expect(page.frames()[1]!.locator('.shoal-frame-error')).toHaveText(`This player could not start: ${srcError}`);
});

test('subtitles through the frame: getCaptions lists the stream’s languages, setCaption shows the cues on the video, captionchange follows; isPlaying; destroy stops the player', async ({ page }) => {
  const query = new URLSearchParams({ src: `${stack.origin.url}/vod/master.m3u8`, autoplay: '1', muted: '1' });
  await page.goto(apiHost('captions-host.html', frameTag(query)));
  expect(await readyOf(page)).toMatchObject({ ready: { playback: 'hls.js' } });
  const frame = await frameOf(page);
  const call = (method: string, ...args: unknown[]) => callOn(page, 0, method, ...args);
  const lastCaptionChange = () =>
    page.evaluate(() => {
      const host = window as unknown as HostWindow & { captionChanges?: unknown[] };
      if (!host.captionChanges) {
        host.captionChanges = [];
        host.clients[0]!.on!('captionchange', (data: unknown) => host.captionChanges!.push(data));
      }
      return host.captionChanges.at(-1) as { captions: Array<{ language: string; mode: string }> } | undefined;
    });
  await lastCaptionChange();
  await expect.poll(async () => (await call('isPlaying')).result, { timeout: 30_000 }).toBe(true);

  // The stream's two WebVTT renditions, none showing, and hls.js has loaded none of them.
  const captions = (await call('getCaptions')).result as Array<{ id: string; label: string; language: string; mode: string }>;
  expect(captions.map(({ label, language, mode }) => ({ label, language, mode }))).toEqual([
    { label: 'English', language: 'en', mode: 'disabled' },
    { label: 'Français', language: 'fr', mode: 'disabled' },
  ]);
  expect(stack.origin.stats().subtitles.requests).toBe(0);

  // Paused at 31 s, inside segment 15 (30–32 s): the cue on screen is that segment's.
  await call('pause');
  expect((await call('isPlaying')).result).toBe(false);
  await call('seek', 31);
  const shownCue = () => frame.evaluate(() => [...document.querySelectorAll('.vjs-text-track-display .vjs-text-track-cue')].map((cue) => cue.textContent).join(' | '));
  const english = captions.find((caption) => caption.language === 'en')!;
  await call('setCaption', english.id);
  await expect.poll(shownCue, { timeout: 20_000 }).toBe('English cue 15');
  expect((await call('getCaptions')).result).toMatchObject([{ language: 'en', mode: 'showing' }, { language: 'fr', mode: 'disabled' }]);
  await expect.poll(async () => (await lastCaptionChange())?.captions.map((caption) => caption.mode)).toEqual(['showing', 'disabled']);
  const french = captions.find((caption) => caption.language === 'fr')!;
  await call('setCaption', french.id);
  await expect.poll(shownCue, { timeout: 20_000 }).toBe('Sous-titre 15');
  await call('seek', 44.5);
  await expect.poll(shownCue, { timeout: 20_000 }).toBe('Sous-titre 22');
  // The subtitle files came from the origin through hls.js's own loader, apart from the segments.
  expect(stack.origin.stats().subtitles.requests).toBeGreaterThanOrEqual(2);
  await call('setCaption', null);
  await expect.poll(shownCue).toBe('');
  expect(((await call('getCaptions')).result as Array<{ mode: string }>).map((caption) => caption.mode)).toEqual(['disabled', 'disabled']);
  expect(await call('setCaption', 'de')).toEqual({
    error: `FRAME_COMMAND: INVALID_OPTION: setCaption: "de" is not a caption id (ids: ${captions.map((caption) => JSON.stringify(caption.id)).join(', ')}; null shows none)`,
  });

  await call('play');
  await expect.poll(async () => (await call('isPlaying')).result).toBe(true);
  // destroy: the frame's player is gone and a later command is answered, not left waiting.
  expect(await call('destroy')).toEqual({ result: undefined });
  await expect(frame.locator('video')).toHaveCount(0);
  await page.evaluate(() => (window as unknown as HostWindow).sendRaw({ id: 900, command: 'getState' }));
  await expect.poll(() => page.evaluate(() => (window as unknown as HostWindow).answers.find((answer) => answer.id === 900))).toMatchObject({
    ok: false,
    error: { code: 'DESTROYED', message: 'the player in this frame was destroyed (the destroy command); load the frame again to play' },
  });
  expect(await call('getState')).toEqual({ error: 'FRAME_COMMAND: the frame client was stopped (destroy() or detach())' });
});
