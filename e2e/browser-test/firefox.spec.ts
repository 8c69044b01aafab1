// Firefox (Debian's firefox-esr, driven by puppeteer-core over WebDriver BiDi from inside these
// Playwright tests). With WebRTC switched off (media.peerconnection.enabled=false, as privacy
// settings and company policies do) the demo's hls.js page with Shoal attached and the player's
// script-tag embed play over HTTP and say why; and a Chromium viewer and a Firefox viewer share a
// live stream over P2P, every segment the players got checked against the origin's SHA-256 manifest.
import { expect, test } from '@playwright/test';
import type { Browser, Page } from 'puppeteer-core';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { launchFirefox } from '../src/firefox.js';
import { waitForAdvance, type PlaybackProbe } from '../src/page-probes.js';
import { runTestSwarm } from './swarm-run.js';

test.describe('Firefox with WebRTC switched off', () => {
  let stack: DemoStack;
  let firefox: Browser;
  test.beforeAll(async () => {
    test.setTimeout(120_000);
    stack = await startDemoStack();
    firefox = await launchFirefox({ prefs: { 'media.peerconnection.enabled': false } });
  });
  test.afterAll(async () => {
    await firefox?.close();
    await stack?.close();
  });

  /** A fresh tab, with the uncaught errors of its page collected. */
  async function openTab(url: string): Promise<{ page: Page; errors: string[] }> {
    const page = await firefox.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error instanceof Error ? error.message : String(error)));
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    return { page, errors };
  }

  test('the hls.js page with Shoal attached plays over HTTP and says why P2P is off', async () => {
    const before = stack.origin.stats().segments.bytes;
    const { page, errors } = await openTab(stack.urls.live);
    try {
      await waitForAdvance(
        () =>
          page.evaluate((): PlaybackProbe => {
            const status = document.getElementById('status')?.textContent ?? '';
            return { currentTime: document.querySelector('video')!.currentTime, paused: false, fatalError: status.startsWith('fatal') ? status : null };
          }),
        4,
      );
      const shown = await page.evaluate(() => ({
        webrtc: typeof RTCPeerConnection,
        p2pState: document.getElementById('p2p-state')?.textContent ?? '',
        httpBytes: document.getElementById('http-bytes')?.textContent ?? '',
        status: document.getElementById('status')?.textContent ?? '',
      }));
      expect(shown.webrtc).toBe('undefined');
      expect(shown.p2pState).toMatch(/^unavailable: WEBRTC_UNAVAILABLE: this environment has no RTCPeerConnection/);
      expect(shown.httpBytes).not.toBe('0 B');
      expect(shown.status).toMatch(/^playing /);
      expect(stack.origin.stats().segments.bytes).toBeGreaterThan(before);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('the script-tag embed plays over HTTP, its stats saying why P2P is off, no error shown', async () => {
    const before = stack.origin.stats().segments.bytes;
    const { page, errors } = await openTab(`${stack.pages.url}/embed-script.html?stream=live`);
    try {
      await waitForAdvance(
        () =>
          page.evaluate((): PlaybackProbe => {
            const video = document.querySelector<HTMLVideoElement>('[data-shoal-src] video');
            const shown = document.querySelector('.vjs-error, .shoal-embed-error') ? 'the player shows an error' : null;
            return { currentTime: video?.currentTime ?? 0, paused: video?.paused ?? true, fatalError: shown };
          }),
        4,
      );
      const player = await page.evaluate(() => {
        const global = (window as unknown as { ShoalPlayer: { playerOf(element: Element): { getStats(): { playback: string; p2p: string; p2pNote: string } } } }).ShoalPlayer;
        const { playback, p2p, p2pNote } = global.playerOf(document.querySelector('[data-shoal-src]')!).getStats();
        return { playback, p2p, p2pNote, panelNote: document.querySelector('.shoal-stats-note')?.textContent ?? '', errorsShown: document.querySelectorAll('.vjs-error, .shoal-embed-error').length };
      });
      expect(player).toMatchObject({ playback: 'hls.js', p2p: 'unavailable', errorsShown: 0 });
      expect(player.p2pNote).toMatch(/no WebRTC/);
      expect(player.panelNote).toMatch(/no WebRTC/);
      // Without a P2P engine the player counts no bytes of its own (httpBytes 0): the origin's count says it served them.
      expect(stack.origin.stats().segments.bytes).toBeGreaterThan(before);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

test('a Chromium viewer and a Firefox viewer share a live stream over P2P, every segment the players got matching the origin\'s manifest', async () => {
  test.setTimeout(240_000);
  const report = await runTestSwarm({
    name: 'chromium-firefox',
    scenario: 'live-normal',
    peers: 2,
    browsers: [
      { browser: 'chromium', count: 1 },
      { browser: 'firefox', count: 1 },
    ],
    durationS: 50,
    engines: ['shoal'],
  });
  expect(report.perPeer.map((peer) => peer.browser)).toEqual(['chromium', 'firefox']);
  // They met: a connection between the two browsers, counted at both ends, none failed.
  const between = report.browsers.pairs.find((pair) => pair.pair === 'chromium↔firefox');
  expect(between?.connected ?? 0).toBeGreaterThanOrEqual(2);
  expect(between?.failed).toBe(0);
  // Segments crossed between them (each viewer's only peer is the other), at least one way.
  const [chromium, firefox] = report.browsers.byBrowser;
  console.log(`chromium got ${chromium!.p2pBytes} B from its peer, firefox ${firefox!.p2pBytes} B`);
  expect(chromium!.p2pBytes + firefox!.p2pBytes).toBeGreaterThan(0);
  expect(chromium!.uploadedBytes + firefox!.uploadedBytes).toBeGreaterThan(0);
  // What each player was handed, from the origin or the other browser, is what the origin published.
  expect(report.verification!.mismatched).toBe(0);
  expect(report.verification!.verified).toBeGreaterThan(20);
});
