// The demo's processes in one place: origin (VOD + simulated live), tracker (its own process) and
// the example pages, with the browser tests' own pages (e2e/pages) under /test/. Used by
// `npm run demo`, the browser tests and the swarm runner alike.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOrigin, type Origin, type OriginFaults } from './origin.js';
import { startStaticServer, type StaticServer } from './static-server.js';
import { startTrackerProcess, type TrackerProcess } from './tracker-process.js';

export interface DemoStackOptions {
  host?: string;
  /** 0 picks free ports (tests); the demo uses fixed ones. */
  pagesPort?: number;
  originPort?: number;
  trackerPort?: number;
  faults?: OriginFaults;
}

export interface DemoStack {
  origin: Origin;
  tracker: TrackerProcess;
  pages: StaticServer;
  urls: { index: string; live: string; vod: string };
  /** The browser tests' viewer (e2e/pages/test-viewer.js) with this query, e.g. `stream=live&p2p=0`. */
  testViewerUrl(query: string): string;
  close(): Promise<void>;
}

const repoPath = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/** Directories the example pages and the tests' pages load their scripts from. */
export function pageMounts(): Record<string, string> {
  const examplesRequire = createRequire(repoPath('examples/package.json'));
  return {
    '/': repoPath('examples'),
    '/test/': repoPath('e2e/pages'),
    '/lib/hls.js/': `${dirname(examplesRequire.resolve('hls.js/package.json'))}/dist`,
    '/lib/video.js/': `${dirname(examplesRequire.resolve('video.js/package.json'))}/dist`,
    '/lib/shoal-hlsjs/': repoPath('packages/hlsjs/dist'),
    '/lib/shoal-player/': repoPath('packages/player/dist'),
  };
}

export async function startDemoStack(options: DemoStackOptions = {}): Promise<DemoStack> {
  const host = options.host ?? '127.0.0.1';
  const started: Array<{ close(): Promise<void> }> = [];
  try {
    const origin = await startOrigin({ host, port: options.originPort ?? 0, faults: options.faults });
    started.push(origin);
    const tracker = await startTrackerProcess({ host, port: options.trackerPort ?? 0 });
    started.push(tracker);
    const pages = await startStaticServer({
      host,
      port: options.pagesPort ?? 0,
      mounts: pageMounts(),
      config: { originUrl: origin.url, trackerUrls: [tracker.url] },
    });
    started.push(pages);
    return {
      origin,
      tracker,
      pages,
      urls: {
        index: `${pages.url}/`,
        live: `${pages.url}/hlsjs.html?stream=live`,
        vod: `${pages.url}/hlsjs.html?stream=vod`,
      },
      testViewerUrl: (query) => `${pages.url}/test/test-viewer.html?${query}`,
      close: async () => {
        await Promise.all(started.map((part) => part.close()));
      },
    };
  } catch (error) {
    await Promise.all(started.map((part) => part.close()));
    throw error;
  }
}
