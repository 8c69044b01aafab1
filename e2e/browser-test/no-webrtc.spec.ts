// P2P is an addition, never a condition: where WebRTC is missing or throws, the pages play over
// HTTP as hls.js alone would, and say why. Here in Chromium, with RTCPeerConnection taken away (as
// in builds without WebRTC) or made to throw (as a privacy setting or extension does) before any
// page script runs; Firefox and WebKit have their own tests.
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

const WITHOUT_WEBRTC = {
  missing: () => {
    for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel']) delete (window as unknown as Record<string, unknown>)[name];
  },
  throwing: () => {
    const Original = window.RTCPeerConnection;
    window.RTCPeerConnection = function RTCPeerConnection() {
      throw new DOMException('WebRTC is disabled by policy', 'NotAllowedError');
    } as unknown as typeof RTCPeerConnection;
    window.RTCPeerConnection.prototype = Original.prototype;
  },
};

async function watchErrors(page: Page) {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

for (const [how, script] of Object.entries(WITHOUT_WEBRTC)) {
  test(`WebRTC ${how}: the hls.js page with Shoal attached plays over HTTP and says why`, async ({ page }) => {
    await page.addInitScript(script);
    const errors = await watchErrors(page);
    const before = stack.origin.stats().segments.bytes;
    await page.goto(stack.urls.live);
    await waitForPlaybackAdvance(page, 4);
    await expect(page.locator('#p2p-state')).toHaveText(
      how === 'missing' ? /^unavailable: WEBRTC_UNAVAILABLE: this environment has no RTCPeerConnection/ : /^unavailable: WEBRTC_UNAVAILABLE: RTCPeerConnection cannot be created here: WebRTC is disabled by policy/,
    );
    await expect(page.locator('#http-bytes')).not.toHaveText('0 B');
    await expect(page.locator('#status')).not.toContainText('fatal');
    expect(stack.origin.stats().segments.bytes).toBeGreaterThan(before);
    expect(errors).toEqual([]);
  });
}

test('WebRTC missing: the video.js player plays over HTTP and its stats panel says why', async ({ page }) => {
  await page.addInitScript(WITHOUT_WEBRTC.missing);
  const errors = await watchErrors(page);
  await page.goto(`${stack.pages.url}/videojs.html?stream=live`);
  await waitForPlaybackAdvance(page, 3);
  await expect(page.locator('.shoal-stats-note')).toHaveText(/no WebRTC/);
  const stats = await page.evaluate(() => (window as unknown as { shoalPlayer: { getStats(): { p2p: string; httpBytes: number } } }).shoalPlayer.getStats());
  expect(stats.p2p).toBe('unavailable');
  expect(errors).toEqual([]);
});

test('a tracker that cannot be reached: the page plays over HTTP, P2P unavailable with the tracker named', async ({ page }) => {
  // Nothing listens on port 9 of loopback.
  await page.route('**/config.json', async (route) => {
    const config = await (await route.fetch()).json();
    await route.fulfill({ json: { ...config, trackerUrls: ['ws://127.0.0.1:9/announce'] } });
  });
  await page.goto(stack.urls.live);
  await waitForPlaybackAdvance(page, 4);
  await expect(page.locator('#p2p-state')).toHaveText(/^unavailable: TRACKER: ws:\/\/127\.0\.0\.1:9\/announce: unreachable/, { timeout: 20_000 });
});
