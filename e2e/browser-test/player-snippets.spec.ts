// The embed snippets in real Chromium, as the snippet generator writes them with a TURN server (a
// real coturn on loopback), under the Content-Security-Policy the player README documents: the
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
  // In every frame: the configuration each RTCPeerConnection that made an offer or an answer was
  // created with, and the candidate types of its local description. (Signaling first makes and
  // closes one with no servers, to learn whether WebRTC works here: it describes nothing.)
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
        connections
          .filter((connection) => connection.localDescription !== null)
          .map((connection) => ({
            iceServers: connection.getConfiguration().iceServers,
            candidateTypes: [...(connection.localDescription?.sdp ?? '').matchAll(/ typ (\w+)/g)].map((match) => match[1]),
          })),
    });
  });
});

const recorded = (target: Page | Frame) =>
  target.evaluate(() => (window as unknown as { recordedConnections(): RecordedConnection[] }).recordedConnections());
async function frameOf(page: Page): Promise<Frame> {
  await expect.poll(() => page.frames().some((frame) => frame.url().includes('/embed.html'))).toBe(true);
  return page.frames().find((frame) => frame.url().includes('/embed.html'))!;
}

test('the snippets carry ICE servers (STUN + TURN with credentials) to every connection to a peer of the script-tag embed and the iframe, under the documented CSP', async ({ page }) => {
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
