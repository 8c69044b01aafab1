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
  stats(): {
    swarms: number;
    peers: number;
    seeders: number;
    leechers: number;
    connections: number;
    totals: { messages: number; offersRelayed: number; answersRelayed: number; rateLimited: number; connectionsOpened: number };
  };
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
    BtClient: new (options: { infoHash: string; peerId: string; announce: string[]; port: number; rtcConfig: RTCConfiguration }) => {
      on(event: string, listener: (value: never) => void): void;
      start(): void;
      update(options?: { numwant?: number }): void;
      stop(): void;
      complete(): void;
      scrape(): void;
      destroy(): void;
    };
    /** Clients by name; a page's clients share one socket per tracker URL (the library pools them). */
    clients: Record<string, InstanceType<Window['BtClient']>>;
    states: Record<string, PageState>;
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

interface ClientOptions {
  url: string;
  infoHash: string;
  peerId: string;
}

async function openPage(browser: Browser, bundle: string): Promise<Page> {
  // Camera/microphone permission (no device is opened) lets Chromium offer loopback candidates.
  const context = await browser.newContext({ permissions: ['camera', 'microphone'] });
  const page = await context.newPage();
  await page.setContent('<!doctype html><title>tracker client</title>');
  await page.addScriptTag({ content: bundle });
  await page.evaluate(() => {
    window.clients = {};
    window.states = {};
  });
  return page;
}

/** Starts a client named `name` in the page, recording what it reports in window.states[name]. */
async function startClient(page: Page, name: string, options: ClientOptions): Promise<void> {
  await page.evaluate(({ name, url, infoHash, peerId }) => {
    const state: PageState = { updates: [], scrapes: [], warnings: [], errors: [], peers: 0, connected: 0, received: [] };
    window.states[name] = state;
    // No ICE servers: the library's default is public STUN servers, whose names do not resolve in
    // the test's namespace, and waiting for them held the announce (it carries offers) for 5 s.
    const client = new window.BtClient({ infoHash, peerId, announce: [url], port: 6881, rtcConfig: { iceServers: [] } });
    window.clients[name] = client;
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
  }, { name, ...options });
}

async function openClientPage(browser: Browser, bundle: string, options: ClientOptions): Promise<Page> {
  const page = await openPage(browser, bundle);
  await startClient(page, 'main', options);
  return page;
}

const pageState = (page: Page, name = 'main') => page.evaluate((name) => window.states[name]!, name);
const lastScrape = async (page: Page) => {
  const count = (await pageState(page)).scrapes.length;
  await page.evaluate(() => window.clients.main!.scrape());
  await expect.poll(async () => (await pageState(page)).scrapes.length).toBeGreaterThan(count);
  const { complete, incomplete } = (await pageState(page)).scrapes.at(-1)!;
  return { complete, incomplete };
};

test.describe('bittorrent-tracker Client against the shoal tracker', () => {
  let tracker: RunningTracker;
  let bundle: string;
  let startTracker: (options: object) => Promise<RunningTracker>;

  test.beforeAll(async () => {
    if (!existsSync(trackerEntry)) throw new Error('tracker/dist is missing: run `npx tsc -p tracker/tsconfig.json` first');
    ({ startTracker } = (await import(trackerEntry)) as { startTracker: (options: object) => Promise<RunningTracker> });
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
    await alice.evaluate(() => window.clients.main!.complete());
    await expect.poll(() => lastScrape(bob)).toEqual({ complete: 1, incomplete: 1 });

    // `stopped` removes Bob from the swarm (his socket stays open).
    await bob.evaluate(() => window.clients.main!.stop());
    await expect.poll(() => lastScrape(alice)).toEqual({ complete: 1, incomplete: 0 });
    expect(tracker.stats()).toMatchObject({ swarms: 1, peers: 1, seeders: 1 });

    // A closed page closes its socket: Alice leaves, the swarm is freed.
    await alice.context().close();
    await expect.poll(() => tracker.stats().peers).toBe(0);
    expect(tracker.stats().swarms).toBe(0);

    for (const page of [bob]) expect((await pageState(page)).errors).toEqual([]);
    await bob.context().close();
  });
  test('a rate-limited client keeps its socket: each refusal is a warning for its torrent, and its other torrent on that socket still connects', async ({ browser }) => {
    // A tight bucket: 10 messages at once, 2 per second after that.
    const limited = await startTracker({ host: '127.0.0.1', port: 0, logLevel: 'warn', messagesPerSecond: 2, messageBurst: 10 });
    try {
      const busy = hex('rate-limited swarm');
      const calm = hex('calm swarm');
      const alicePeerId = hex('-WW0001-alice-2');
      const alice = await openPage(browser, bundle);
      // What Alice's page sees on the wire: every socket it opens, every frame it receives.
      const sockets: { isClosed(): boolean }[] = [];
      const received: Record<string, unknown>[] = [];
      alice.on('websocket', (socket) => {
        sockets.push(socket);
        socket.on('framereceived', ({ payload }) => received.push(JSON.parse(String(payload)) as Record<string, unknown>));
      });
      // Two torrents in one page share one socket to the tracker.
      await startClient(alice, 'busy', { url: limited.url, infoHash: busy, peerId: alicePeerId });
      await startClient(alice, 'calm', { url: limited.url, infoHash: calm, peerId: alicePeerId });
      await expect.poll(async () => (await pageState(alice, 'busy')).updates.length).toBe(1);
      await expect.poll(async () => (await pageState(alice, 'calm')).updates.length).toBe(1);
      expect(sockets).toHaveLength(1);

      // Far more announces at once than the bucket holds (one offer each).
      await alice.evaluate(() => {
        for (let i = 0; i < 16; i++) window.clients.busy!.update({ numwant: 1 });
      });
      await expect.poll(() => limited.stats().totals.messages, { timeout: 20_000 }).toBeGreaterThanOrEqual(2 + 16);
      const refusals = () => received.filter((message) => message['failure reason'] !== undefined);
      await expect.poll(() => refusals().length).toBe(limited.stats().totals.rateLimited);
      expect(refusals().length).toBeGreaterThan(0);
      for (const refusal of refusals()) {
        expect(refusal).toMatchObject({ action: 'announce', 'failure reason': 'rate limit exceeded: slow down', info_hash: Buffer.from(busy, 'hex').toString('latin1') });
      }
      // The client took each as a warning for the busy torrent only, and kept its socket.
      await expect
        .poll(async () => (await pageState(alice, 'busy')).warnings.filter((warning) => warning === 'rate limit exceeded: slow down').length)
        .toBe(refusals().length);
      expect((await pageState(alice, 'busy')).warnings.filter((warning) => !warning.startsWith('rate limit'))).toEqual([]);
      expect((await pageState(alice, 'calm')).warnings).toEqual([]);
      expect(sockets).toHaveLength(1);
      expect(sockets[0]!.isClosed()).toBe(false);

      // Once the pause the tracker asked for is over, a newcomer in the calm torrent reaches Alice
      // through the same socket: offer relayed to her, her answer back, a WebRTC connection.
      await new Promise((resolve) => setTimeout(resolve, Number(refusals().at(-1)!['min interval']) * 1000 + 500));
      const bob = await openClientPage(browser, bundle, { url: limited.url, infoHash: calm, peerId: hex('-WW0001-bob-2') });
      await expect.poll(async () => (await pageState(alice, 'calm')).received, { timeout: 20_000 }).toEqual([`hello from ${hex('-WW0001-bob-2').slice(0, 10)}`]);
      await expect.poll(async () => (await pageState(bob)).received, { timeout: 20_000 }).toEqual([`hello from ${alicePeerId.slice(0, 10)}`]);
      expect(sockets).toHaveLength(1);
      expect(limited.stats().totals.connectionsOpened).toBe(2);
      for (const name of ['busy', 'calm']) expect((await pageState(alice, name)).errors).toEqual([]);
      await alice.context().close();
      await bob.context().close();
    } finally {
      await limited.close();
    }
  });
});
