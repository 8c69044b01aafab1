// The browsers a swarm's viewers play in: Chromium through Playwright, Firefox (Debian's
// firefox-esr) through puppeteer-core over WebDriver BiDi, and the mix a run asks for
// (--browsers chromium:4,firefox:4). The runner sees one shape, ViewerPage, whichever drives it.
import type { Browser as PlaywrightBrowser, BrowserContext } from 'playwright-core';
import type { Browser as PuppeteerBrowser } from 'puppeteer-core';

export type BrowserName = 'chromium' | 'firefox';
export const browserNames: readonly BrowserName[] = ['chromium', 'firefox'];

/** How many of a run's viewers play in each browser, in the order given. */
export type BrowserMix = Array<{ browser: BrowserName; count: number }>;

/** `chromium:4,firefox:4` → the mix; a bare name counts 1. Throws on an unknown browser or a bad count. */
export function parseBrowserMix(text: string): BrowserMix {
  const mix: BrowserMix = [];
  for (const part of text.split(',').map((word) => word.trim()).filter(Boolean)) {
    const [name, countText = '1', ...rest] = part.split(':');
    if (!(browserNames as readonly string[]).includes(name!)) throw new Error(`unknown browser "${name}" in --browsers; one of: ${browserNames.join(', ')}`);
    const count = Number(countText);
    if (rest.length > 0 || !Number.isInteger(count) || count < 1) throw new Error(`--browsers: "${part}" needs a whole number of viewers after the colon (e.g. firefox:4)`);
    if (mix.some((entry) => entry.browser === name)) throw new Error(`--browsers names ${name} twice`);
    mix.push({ browser: name as BrowserName, count });
  }
  if (mix.length === 0) throw new Error('--browsers names no browser (e.g. chromium:4,firefox:4)');
  return mix;
}

export const mixSize = (mix: BrowserMix) => mix.reduce((sum, entry) => sum + entry.count, 0);

/**
 * The browser of viewer `index`: interleaved in proportion to the mix, so that each browser's
 * viewers join throughout the run, not all of one after all of the other. Viewers past the mix's
 * size (churn's newcomers) take the browser of the one they replace (index modulo the size).
 */
export function browserOfViewer(mix: BrowserMix, index: number): BrowserName {
  const total = mixSize(mix);
  const position = index % total;
  const assigned = new Map<BrowserName, number>();
  let chosen: BrowserName = mix[0]!.browser;
  for (let i = 0; i <= position; i += 1) {
    // The browser furthest behind its share of the first i + 1 viewers.
    let best = -Infinity;
    for (const { browser, count } of mix) {
      const deficit = (count * (i + 1)) / total - (assigned.get(browser) ?? 0);
      if (deficit > best + 1e-9) {
        best = deficit;
        chosen = browser;
      }
    }
    assigned.set(chosen, (assigned.get(chosen) ?? 0) + 1);
  }
  return chosen;
}

/** One viewer's page, whichever browser shows it. */
export interface ViewerPage {
  readonly browser: BrowserName;
  goto(url: string): Promise<void>;
  evaluate<T>(fn: () => T | Promise<T>): Promise<T>;
  onPageError(listener: (message: string) => void): void;
  /**
   * The page goes with no goodbye to its peers, the way a browser that is killed or loses power
   * leaves: Chromium's renderer crashes (CDP Page.crash); Firefox's process is killed (each
   * Firefox viewer has its own). What is left is closed.
   */
  crash(): Promise<void>;
  /** Closes the page (its context, or its own browser). */
  close(): Promise<void>;
}

/** Where viewer pages come from: one shared Chromium (a context each), or a browser of the viewer's own. */
export interface ViewerBrowser {
  readonly name: BrowserName;
  newPage(): Promise<ViewerPage>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Chromium through Playwright. Each page its own context (own cookies, cache, WebRTC identity)
 * with camera/microphone permission, which makes Chromium offer host (loopback) ICE candidates;
 * no device opens. `ownBrowser`: the browser is this viewer's alone, and closing the page closes it.
 */
export function chromiumViewerBrowser(browser: PlaywrightBrowser, options: { ownBrowser: boolean }): ViewerBrowser {
  return {
    name: 'chromium',
    close: () => browser.close(),
    async newPage() {
      const context: BrowserContext = await browser.newContext({ permissions: ['camera', 'microphone'], viewport: { width: 200, height: 120 } });
      const page = await context.newPage();
      const close = () => (options.ownBrowser ? browser.close() : context.close());
      return {
        browser: 'chromium',
        goto: async (url) => void (await page.goto(url, { waitUntil: 'domcontentloaded' })),
        evaluate: (fn) => page.evaluate(fn),
        onPageError: (listener) => page.on('pageerror', (error) => listener(error.message)),
        async crash() {
          const cdp = await context.newCDPSession(page);
          // The command never answers: the renderer it would answer from is gone.
          void cdp.send('Page.crash').catch(() => {});
          await sleep(500);
          await close();
        },
        close,
      };
    },
  };
}

/** Firefox through puppeteer-core over WebDriver BiDi: one browser per viewer, so a page's close is its browser's. */
export function firefoxViewerBrowser(browser: PuppeteerBrowser): ViewerBrowser {
  return {
    name: 'firefox',
    close: () => browser.close(),
    async newPage() {
      const page = (await browser.pages())[0] ?? (await browser.newPage());
      await page.setViewport({ width: 200, height: 120 });
      return {
        browser: 'firefox',
        goto: async (url) => void (await page.goto(url, { waitUntil: 'domcontentloaded' })),
        evaluate<T>(fn: () => T | Promise<T>) {
          return page.evaluate(fn) as Promise<T>;
        },
        onPageError: (listener) => page.on('pageerror', (error) => listener(error instanceof Error ? error.message : String(error))),
        async crash() {
          browser.process()?.kill('SIGKILL');
          await sleep(500);
          await browser.close().catch(() => {});
        },
        close: () => browser.close(),
      };
    },
  };
}
