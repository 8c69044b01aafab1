// One viewer in the swarm: its own browser context (own cookies, cache, WebRTC identity) with a
// page playing the stream, and the way the runner reads it.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { ViewerSnapshot } from './viewer-snapshot.js';

export interface ViewerSession {
  id: string;
  index: number;
  p2p: boolean;
  /** Epoch ms of the join and of the leave (null while watching). */
  joinedAtMs: number;
  leftAtMs: number | null;
  /** The newest snapshot read; the final one once the viewer has left. */
  last: ViewerSnapshot | null;
  /** Reads the page's counters; keeps the previous snapshot if the page does not answer in time. */
  sample(timeoutMs?: number): Promise<ViewerSnapshot | null>;
  /** Takes a final snapshot, then closes the context abruptly (a viewer closing its tab). */
  leave(): Promise<void>;
  /**
   * Takes a final snapshot, then crashes the page's renderer (CDP Page.crash): its peers get no
   * goodbye, the way a browser that is killed or loses power leaves. Then closes what is left.
   */
  crash(): Promise<void>;
  /** Closes the context without a last snapshot (the run is over). */
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const withTimeout = <T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} timed out after ${timeoutMs} ms`)), timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });

export interface OpenViewerOptions {
  id: string;
  index: number;
  p2p: boolean;
  url: string;
  log?: (line: string) => void;
  /** --trace: receives the page's log lines as each snapshot drains them. */
  onTrace?: (lines: string[]) => void;
  /** The browser is this viewer's alone (its own network namespace): leaving closes it. */
  ownBrowser?: boolean;
}

export async function openViewer(browser: Browser, options: OpenViewerOptions): Promise<ViewerSession> {
  // Camera/microphone permission makes Chromium offer host (loopback) ICE candidates; no device opens.
  const context: BrowserContext = await browser.newContext({
    permissions: ['camera', 'microphone'],
    viewport: { width: 200, height: 120 },
  });
  const page: Page = await context.newPage();
  page.on('pageerror', (error) => options.log?.(`${options.id}: page error: ${error.message}`));
  const session: ViewerSession = {
    id: options.id,
    index: options.index,
    p2p: options.p2p,
    joinedAtMs: Date.now(),
    leftAtMs: null,
    last: null,
    async sample(timeoutMs = 5_000) {
      if (session.leftAtMs !== null) return session.last;
      try {
        const snapshot = await withTimeout(
          page.evaluate(() => (window as unknown as { swarmViewer?: { snapshot(): unknown } }).swarmViewer?.snapshot() ?? null),
          timeoutMs,
          `${options.id} snapshot`,
        );
        if (snapshot) {
          const { traceLines, ...rest } = snapshot as ViewerSnapshot;
          if (traceLines?.length) options.onTrace?.(traceLines);
          session.last = rest;
        }
      } catch (error) {
        options.log?.(`${options.id}: ${(error as Error).message}`);
      }
      return session.last;
    },
    async leave() {
      if (session.leftAtMs !== null) return;
      await session.sample();
      session.leftAtMs = Date.now();
      await session.close();
    },
    async crash() {
      if (session.leftAtMs !== null) return;
      await session.sample();
      session.leftAtMs = Date.now();
      const cdp = await context.newCDPSession(page);
      // The command never answers: the renderer it would answer from is gone.
      void cdp.send('Page.crash').catch(() => {});
      await sleep(500);
      await session.close();
    },
    async close() {
      await withTimeout(options.ownBrowser ? browser.close() : context.close(), 10_000, `${options.id} close`).catch((error: Error) => options.log?.(`${options.id}: ${error.message}`));
    },
  };
  await withTimeout(page.goto(options.url, { waitUntil: 'domcontentloaded' }), 20_000, `${options.id} page load`);
  return session;
}
