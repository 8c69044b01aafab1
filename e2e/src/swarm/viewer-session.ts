// One viewer in the swarm: a page of its own (a Chromium context, or a Firefox of its own; see
// viewer-browsers.ts) playing the stream, and the way the runner reads it.
import type { BrowserName, ViewerPage } from './viewer-browsers.js';
import type { ViewerSnapshot } from './viewer-snapshot.js';

export interface ViewerSession {
  id: string;
  index: number;
  p2p: boolean;
  /** The browser it plays in. */
  browser: BrowserName;
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
   * Takes a final snapshot, then crashes the page (ViewerPage.crash): its peers get no goodbye,
   * the way a browser that is killed or loses power leaves. Then closes what is left.
   */
  crash(): Promise<void>;
  /** Closes the page without a last snapshot (the run is over). */
  close(): Promise<void>;
}

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
}

export async function openViewer(page: ViewerPage, options: OpenViewerOptions): Promise<ViewerSession> {
  page.onPageError((message) => options.log?.(`${options.id}: page error: ${message}`));
  const session: ViewerSession = {
    id: options.id,
    index: options.index,
    p2p: options.p2p,
    browser: page.browser,
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
      await withTimeout(page.crash(), 10_000, `${options.id} crash`).catch((error: Error) => options.log?.(`${options.id}: ${error.message}`));
    },
    async close() {
      await withTimeout(page.close(), 10_000, `${options.id} close`).catch((error: Error) => options.log?.(`${options.id}: ${error.message}`));
    },
  };
  try {
    await withTimeout(page.goto(options.url), 20_000, `${options.id} page load`);
  } catch (error) {
    // A page that never loaded is closed here: the runner never learns of it to close it later.
    await session.close();
    throw error;
  }
  return session;
}
