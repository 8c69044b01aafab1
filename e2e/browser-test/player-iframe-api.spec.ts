// The iframe embed's API in real Chromium, from a host page of its own: a ShoalFrameClient created
// 2 s after the frame said `ready` still gets `ready`, and every method and event of the API does
// what it says. Then the embed snippets, as the snippet generator writes them with a TURN server
// (a real coturn on loopback), under the Content-Security-Policy the player README documents: the
// script-tag embed's and the iframe's RTCPeerConnections are created with those ICE servers, and
// gather a relay candidate from coturn with the credentials.
import { expect, test, type Frame, type Page } from '@playwright/test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { startStaticServer, type StaticServer } from '../src/static-server.js';
import { startTurnServer, type TurnServer } from '../src/turn-server.js';

let stack: DemoStack;
let turn: TurnServer;
/** The host pages: another site (origin) than the player's, as on the web. */
let hostDir: string;
let hosts: StaticServer;
test.beforeAll(async () => {
  stack = await startDemoStack();
  turn = await startTurnServer();
  hostDir = mkdtempSync(join(tmpdir(), 'shoal-hosts-'));
  hosts = await startStaticServer({ mounts: { '/': hostDir } });
});
test.afterAll(async () => {
  await Promise.all([stack?.close(), turn?.close(), hosts?.close()]);
  rmSync(hostDir, { recursive: true, force: true });
});

/** Serves `html` as a host page (from loopback, like the player: Chromium keeps public pages off loopback). */
function hostPage(name: string, html: string): string {
  writeFileSync(join(hostDir, name), html);
  return `${hosts.url}/${name}`;
}

interface RecordedConnection {
  iceServers: Array<{ urls: string[]; username: string; credential: string }>;
  candidateTypes: string[];
}

test.beforeEach(async ({ context }) => {
  // In every frame: the configuration each RTCPeerConnection was created with, and the candidate
  // types of its local description.
  await context.addInitScript(() => {
    const connections: RTCPeerConnection[] = [];
    const Original = window.RTCPeerConnection;
    window.RTCPeerConnection = class extends Original {
      constructor(configuration?: RTCConfiguration) {
        super(configuration);
        connections.push(this);
      }
    } as typeof RTCPeerConnection;
    Object.assign(window, {
      recordedConnections: () =>
        connections.map((connection) => ({
          iceServers: connection.getConfiguration().iceServers,
          candidateTypes: [...(connection.localDescription?.sdp ?? '').matchAll(/ typ (\w+)/g)].map((match) => match[1]),
        })),
    });
  });
});

const recorded = (target: Page | Frame) =>
  target.evaluate(() => (window as unknown as { recordedConnections(): RecordedConnection[] }).recordedConnections());

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
    for (const name of ['ready', 'playing', 'pause', 'ended', 'error', 'stats', 'statechange', 'status', 'volumechange', 'ratechange', 'resolutionchange']) {
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
  expect(await refusal('setPlaybackRate', 40)).toMatch(/FRAME_COMMAND: INVALID_OPTION: .*setPlaybackRate: 40/);
  expect(await refusal('setResolution', 9)).toMatch(/INVALID_OPTION: .*resolution: 9/);

  // Near the end of the 60 s VOD: `ended`, and the state says so.
  await call('seek', 58.5);
  await expect.poll(() => lastSeen('statechange'), { timeout: 15_000 }).toEqual({ state: 'ended' });
  expect((await seen('ended')).length).toBe(1);
  expect(await call('getState')).toBe('ended');
  expect(await seen('error')).toEqual([]);
});

test('the snippets carry ICE servers (STUN + TURN with credentials) to every RTCPeerConnection of the script-tag embed and the iframe, under the documented CSP', async ({ page }) => {
  const iceServers = [
    { urls: `stun:127.0.0.1:${turn.port}` },
    { urls: `turn:127.0.0.1:${turn.port}?transport=udp`, username: turn.username, credential: turn.credential },
  ];
  // The snippet generator's own function writes the snippets.
  await page.goto(`${stack.pages.url}/snippet.html`);
  const snippets = await page.evaluate(
    ([src, tracker, iceServersValue, base]) =>
      (window as unknown as { ShoalPlayer: { embedSnippets(settings: object): { script: string; iframe: string } } }).ShoalPlayer.embedSnippets({
        src,
        trackers: [tracker],
        iceServers: iceServersValue,
        scriptUrl: `${base}/lib/shoal-player/shoal-player.min.js`,
        frameUrl: `${base}/lib/shoal-player/embed.html`,
        autoplay: true,
        muted: true,
      }),
    [`${stack.origin.url}/live/master.m3u8`, stack.tracker.url, iceServers, stack.pages.url] as const,
  );
  expect(snippets.iframe).toMatch(/ title="Video player" /);

  // The CSP of the player README's "Content-Security-Policy" section, for a page with both embeds.
  const csp = [
    `script-src ${stack.pages.url}`,
    "style-src 'unsafe-inline'",
    'worker-src blob:',
    'media-src blob:',
    'font-src data:',
    `img-src data: ${stack.pages.url}`,
    `connect-src ${stack.origin.url} ${stack.tracker.url}`,
    `frame-src ${stack.pages.url}`,
  ].join('; ');
  await page.addInitScript(() => {
    const violations: string[] = [];
    Object.assign(window, { cspViolations: violations });
    document.addEventListener('securitypolicyviolation', (event) => violations.push(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`));
  });
  await page.goto(
    hostPage(
      'snippet-host.html',
      `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}"><title>snippets</title></head>
        <body>${snippets.script}\n${snippets.iframe}</body></html>`,
    ),
  );
  const frame = await frameOf(page);
  const expected = iceServers.map((server) => ({ urls: [server.urls], username: server.username ?? '', credential: server.credential ?? '' }));
  for (const [where, target] of [['script-tag embed', page], ['iframe', frame]] as const) {
    // Offers are made at the first announce: each is a peer connection with the snippet's servers.
    await expect.poll(async () => (await recorded(target)).length, { timeout: 30_000, message: `${where}: no RTCPeerConnection` }).toBeGreaterThan(0);
    for (const connection of await recorded(target)) expect(connection.iceServers, where).toEqual(expected);
    // coturn accepted the credentials: a relay candidate was gathered.
    await expect.poll(async () => (await recorded(target)).some((connection) => connection.candidateTypes.includes('relay')), { timeout: 15_000, message: `${where}: no relay candidate` }).toBe(true);
  }
  await expect.poll(() => frame.evaluate(() => document.querySelector('video')?.currentTime ?? 0), { timeout: 30_000 }).toBeGreaterThan(1);
  await expect.poll(() => page.evaluate(() => document.querySelector('video')?.currentTime ?? 0), { timeout: 30_000 }).toBeGreaterThan(1);
  expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([]);
});
