// Reads playback state out of a page, for browser tests and the swarm runner.
import type { Page } from 'playwright-core';

export interface PlaybackProbe {
  currentTime: number;
  paused: boolean;
  fatalError: string | null;
}

export async function probePlayback(page: Page, selector = 'video'): Promise<PlaybackProbe> {
  return page.evaluate((videoSelector) => {
    const video = document.querySelector<HTMLVideoElement>(videoSelector);
    // The tests' own viewer records hls.js's fatal errors (e2e/pages/test-viewer.js); other pages show them.
    const viewer = (window as unknown as { testViewer?: { fatalError: string | null } }).testViewer;
    return { currentTime: video?.currentTime ?? 0, paused: video?.paused ?? true, fatalError: viewer?.fatalError ?? null };
  }, selector);
}

/**
 * Waits until the video's currentTime has advanced by `seconds` since it first moved; fails early
 * on a fatal player error, with the page's own words.
 */
export async function waitForPlaybackAdvance(page: Page, seconds: number, timeoutMs = 60_000): Promise<{ advancedS: number }> {
  return waitForAdvance(() => probePlayback(page), seconds, timeoutMs);
}

/**
 * waitForPlaybackAdvance for any browser driver: `probe` reads the page (Firefox through
 * puppeteer-core, WebKit through WebDriver), every half second.
 */
export async function waitForAdvance(probe: () => Promise<PlaybackProbe>, seconds: number, timeoutMs = 60_000): Promise<{ advancedS: number }> {
  const deadline = Date.now() + timeoutMs;
  let firstTime: number | undefined;
  let last: PlaybackProbe | undefined;
  while (Date.now() < deadline) {
    last = await probe();
    if (last.fatalError) throw new Error(`fatal player error: ${last.fatalError}`);
    if (firstTime === undefined && last.currentTime > 0) firstTime = last.currentTime;
    if (firstTime !== undefined && last.currentTime - firstTime >= seconds) return { advancedS: last.currentTime - firstTime };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`playback did not advance by ${seconds} s within ${timeoutMs} ms (last currentTime ${last?.currentTime ?? 'n/a'}, started at ${firstTime ?? 'never'})`);
}
