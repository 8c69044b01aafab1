// Conformance of @shoal/tracker with the real client library: bittorrent-tracker's `Client`,
// bundled for the browser (its WebRTC polyfill cannot load in Node here), runs in two Chromium
// pages that announce through our tracker, exchange offer/answer through it and connect over
// WebRTC. Scrape counts, `completed`, `stopped` and a closed socket are checked against the
// tracker's own stats.
//
// Needs the built tracker (tracker/dist): `npx tsc -p tracker/tsconfig.json`.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { build } from 'esbuild';

const trackerDir = fileURLToPath(new URL('../../tracker/', import.meta.url));
const trackerEntry = fileURLToPath(new URL('../../tracker/dist/index.js', import.meta.url));

interface RunningTracker {
  url: string;
  stats(): { swarms: number; peers: number; seeders: number; leechers: number; totals: { offersRelayed: number; answersRelayed: number } };
  close(): Promise<void>;
}

interface PageState {
  updates: { complete: number; incomplete: number }[];
  scrapes: { complete: number; incomplete: number; infoHash: string }[];
  warnings: string[];
  errors: string[];
  peers: number;
  connected: number;
  received: string[];
}

declare global {
  interface Window {
    BtClient: new (options: { infoHash: string; peerId: string; announce: string[]; port: number }) => {
      on(event: string, listener: (value: never) => void): void;
      start(): void;
      stop(): void;
      complete(): void;
      scrape(): void;
      destroy(): void;
    };
    trackerClient: InstanceType<Window['BtClient']>;
    state: PageState;
  }
}

/** bittorrent-tracker's client as one browser script. Node's `events` comes from the `events` package. */
async function bundleClient(): Promise<string> {
  const result = await build({
    stdin: { contents: "import Client from 'bittorrent-tracker/client'; window.BtClient = Client;", resolveDir: trackerDir },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    write: false,
    nodePaths: [`${trackerDir}node_modules`],
    // The client checks `process.browser` before requiring a port; `debug` probes `process` safely.
    define: { global: 'globalThis', 'process.browser': 'true' },
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

const hex = (label: string) => Buffer.from(label.padEnd(20, '.').slice(0, 20)).toString('hex');

async function openClientPage(browser: Browser, bundle: string, options: { url: string; infoHash: string; peerId: string }): Promise<Page> {
  // Camera/microphone permission (no device is opened) lets Chromium offer loopback candidates.
  const context = await browser.newContext({ permissions: ['camera', 'microphone'] });
  const page = await context.newPage();
  await page.setContent('<!doctype html><title>tracker client</title>');
  await page.addScriptTag({ content: bundle });
  await page.evaluate(({ url, infoHash, peerId }) => {
    const state: PageState = { updates: [], scrapes: [], warnings: [], errors: [], peers: 0, connected: 0, received: [] };
    window.state = state;
    const client = new window.BtClient({ infoHash, peerId, announce: [url], port: 6881 });
    window.trackerClient = client;
    client.on('update', (data: { complete: number; incomplete: number }) => state.updates.push({ complete: data.complete, incomplete: data.incomplete }));
    client.on('scrape', (data: { complete: number; incomplete: number; infoHash: string }) =>
      state.scrapes.push({ complete: data.complete, incomplete: data.incomplete, infoHash: data.infoHash }),
    );
    client.on('warning', (error: Error) => state.warnings.push(String(error?.message ?? error)));
    client.on('error', (error: Error) => state.errors.push(String(error?.message ?? error)));
    client.on('peer', (peer: { on(event: string, listener: (value: never) => void): void; send(text: string): void }) => {
      state.peers++;
      peer.on('connect', () => {
        state.connected++;
        peer.send(`hello from ${peerId.slice(0, 10)}`);
      });
      peer.on('data', (data: Uint8Array) => state.received.push(new TextDecoder().decode(data)));
      peer.on('error', (error: Error) => state.warnings.push(`peer: ${error.message}`));
    });
    client.start();
  }, options);
  return page;
}

const pageState = (page: Page) => page.evaluate(() => window.state);
const lastScrape = async (page: Page) => {
  const count = (await pageState(page)).scrapes.length;
  await page.evaluate(() => window.trackerClient.scrape());
  await expect.poll(async () => (await pageState(page)).scrapes.length).toBeGreaterThan(count);
  const { complete, incomplete } = (await pageState(page)).scrapes.at(-1)!;
  return { complete, incomplete };
};

test.describe('bittorrent-tracker Client against the shoal tracker', () => {
  let tracker: RunningTracker;
  let bundle: string;

  test.beforeAll(async () => {
    if (!existsSync(trackerEntry)) throw new Error('tracker/dist is missing: run `npx tsc -p tracker/tsconfig.json` first');
    const { startTracker } = (await import(trackerEntry)) as { startTracker: (options: object) => Promise<RunningTracker> };
    tracker = await startTracker({ host: '127.0.0.1', port: 0, logLevel: 'warn' });
    bundle = await bundleClient();
  });
  test.afterAll(async () => {
    await tracker?.close();
  });

  test('two clients announce, signal through the tracker, connect over WebRTC; scrape, completed, stopped and close are tracked', async ({ browser }) => {
    const infoHash = hex('shoal conformance');
    const alice = await openClientPage(browser, bundle, { url: tracker.url, infoHash, peerId: hex('-WW0001-alice') });
    await expect.poll(async () => (await pageState(alice)).updates.length).toBe(1);
    expect((await pageState(alice)).updates[0]).toEqual({ complete: 0, incomplete: 1 });

    // Bob's start carries offers; the tracker relays one to Alice, her answer comes back to Bob.
    const bob = await openClientPage(browser, bundle, { url: tracker.url, infoHash, peerId: hex('-WW0001-bob') });
    await expect.poll(async () => (await pageState(bob)).updates[0]).toEqual({ complete: 0, incomplete: 2 });
    await expect.poll(async () => (await pageState(alice)).received, { timeout: 20_000 }).toEqual([`hello from ${hex('-WW0001-bob').slice(0, 10)}`]);
    await expect.poll(async () => (await pageState(bob)).received, { timeout: 20_000 }).toEqual([`hello from ${hex('-WW0001-alice').slice(0, 10)}`]);
    expect((await pageState(alice)).connected).toBe(1);
    expect((await pageState(bob)).connected).toBe(1);
    expect(tracker.stats().totals.offersRelayed).toBeGreaterThanOrEqual(1);
    expect(tracker.stats().totals.answersRelayed).toBeGreaterThanOrEqual(1);

    // Scrape through the client: both are leechers.
    expect(await lastScrape(alice)).toEqual({ complete: 0, incomplete: 2 });
    expect((await pageState(alice)).scrapes.at(-1)!.infoHash).toBe(infoHash);

    // `completed` makes Alice a seeder.
    await alice.evaluate(() => window.trackerClient.complete());
    await expect.poll(() => lastScrape(bob)).toEqual({ complete: 1, incomplete: 1 });

    // `stopped` removes Bob from the swarm (his socket stays open).
    await bob.evaluate(() => window.trackerClient.stop());
    await expect.poll(() => lastScrape(alice)).toEqual({ complete: 1, incomplete: 0 });
    expect(tracker.stats()).toMatchObject({ swarms: 1, peers: 1, seeders: 1 });

    // A closed page closes its socket: Alice leaves, the swarm is freed.
    await alice.context().close();
    await expect.poll(() => tracker.stats().peers).toBe(0);
    expect(tracker.stats().swarms).toBe(0);

    for (const page of [bob]) expect((await pageState(page)).errors).toEqual([]);
    await bob.context().close();
  });
});
