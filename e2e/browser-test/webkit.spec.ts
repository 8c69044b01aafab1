// WebKit, Safari's engine: WebKitGTK's MiniBrowser (Debian's build has Media Source Extensions and
// ManagedMediaSource, what iPhone Safari 17.1+ plays hls.js through, but no WebRTC), driven over
// WebDriver under Xvfb. The demo's hls.js page with Shoal attached and the player's script-tag
// embed play over HTTP through ManagedMediaSource, say why P2P is off, and show the viewer no error.
import { expect, test } from '@playwright/test';
import { startDemoStack, type DemoStack } from '../src/demo-stack.js';
import { waitForAdvance, type PlaybackProbe } from '../src/page-probes.js';
import { startWebKit, type WebKitSession } from '../src/webkit.js';

let stack: DemoStack;
let webkit: WebKitSession;
test.beforeAll(async () => {
  test.setTimeout(120_000);
  stack = await startDemoStack();
  webkit = await startWebKit();
});
test.afterAll(async () => {
  await webkit?.close();
  await stack?.close();
});

/** What hls.js chose to play through, and whether the video element lets it. */
interface MediaPath {
  webrtc: string;
  managedMediaSource: string;
  disableRemotePlayback: boolean;
  /** hls.js hands a ManagedMediaSource to the video as a <source> child (a MediaSource as video.src). */
  sourceChild: string;
  mediaError: string | null;
}

const MEDIA_PATH = `
  const video = document.querySelector('video');
  return {
    webrtc: typeof RTCPeerConnection,
    managedMediaSource: typeof ManagedMediaSource,
    disableRemotePlayback: video.disableRemotePlayback,
    sourceChild: video.querySelector('source')?.src ?? '',
    mediaError: video.error ? String(video.error.code) + ' ' + video.error.message : null,
  };`;

function expectManagedMediaSource(path: MediaPath): void {
  // The environment is what the test claims: no WebRTC, and ManagedMediaSource for hls.js to pick.
  expect(path.webrtc).toBe('undefined');
  expect(path.managedMediaSource).toBe('function');
  expect(path.sourceChild).toMatch(/^blob:/);
  expect(path.disableRemotePlayback).toBe(true);
  expect(path.mediaError).toBeNull();
}

test('WebKit: the hls.js page with Shoal attached plays over HTTP through ManagedMediaSource, and says why P2P is off', async () => {
  const before = stack.origin.stats().segments.bytes;
  await webkit.goto(stack.urls.live);
  await waitForAdvance(
    () =>
      webkit.evaluate<PlaybackProbe>(`
        const video = document.querySelector('video');
        const status = document.getElementById('status')?.textContent ?? '';
        return { currentTime: video.currentTime, paused: video.paused, fatalError: status.startsWith('fatal') ? status : null };`),
    4,
  );
  const page = await webkit.evaluate<{ p2pState: string; httpBytes: string; status: string }>(`
    const text = (id) => document.getElementById(id)?.textContent ?? '';
    return { p2pState: text('p2p-state'), httpBytes: text('http-bytes'), status: text('status') };`);
  expect(page.p2pState).toMatch(/^unavailable: WEBRTC_UNAVAILABLE: this environment has no RTCPeerConnection/);
  expect(page.httpBytes).not.toBe('0 B');
  expect(page.status).toMatch(/^playing /);
  expectManagedMediaSource(await webkit.evaluate<MediaPath>(MEDIA_PATH));
  expect(stack.origin.stats().segments.bytes).toBeGreaterThan(before);
});

test('WebKit: the script-tag embed plays over HTTP through ManagedMediaSource, its stats saying why P2P is off, no error shown', async () => {
  const before = stack.origin.stats().segments.bytes;
  await webkit.goto(`${stack.pages.url}/embed-script.html?stream=live`);
  await waitForAdvance(
    () =>
      webkit.evaluate<PlaybackProbe>(`
        const video = document.querySelector('[data-shoal-src] video');
        return { currentTime: video?.currentTime ?? 0, paused: video?.paused ?? true, fatalError: document.querySelector('.vjs-error, .shoal-embed-error') ? 'the player shows an error' : null };`),
    4,
  );
  const player = await webkit.evaluate<{ playback: string; p2p: string; p2pNote: string; panelNote: string; errorsShown: number }>(`
    const stats = window.ShoalPlayer.playerOf(document.querySelector('[data-shoal-src]')).getStats();
    return {
      playback: stats.playback, p2p: stats.p2p, p2pNote: stats.p2pNote,
      panelNote: document.querySelector('.shoal-stats-note')?.textContent ?? '',
      errorsShown: document.querySelectorAll('.vjs-error, .shoal-embed-error').length,
    };`);
  expect(player).toMatchObject({ playback: 'hls.js', p2p: 'unavailable', errorsShown: 0 });
  expect(player.p2pNote).toMatch(/no WebRTC/);
  expect(player.panelNote).toMatch(/no WebRTC/);
  // Without a P2P engine the player counts no bytes of its own (httpBytes 0): the origin's count says it served them.
  expect(stack.origin.stats().segments.bytes).toBeGreaterThan(before);
  expectManagedMediaSource(await webkit.evaluate<MediaPath>(MEDIA_PATH));
});
