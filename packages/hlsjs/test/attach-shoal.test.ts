import { swarmIdFromUrl, type HttpClient, type HttpRequest } from '@shoal/core';
import Hls from 'hls.js';
import type { FragmentLoaderContext, LoaderCallbacks, LoaderStats } from 'hls.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { attachShoal, levelStreamKeys, type ShoalHls } from '../src/index.js';

const { Events } = Hls;
const MANIFEST = 'https://origin.test/vod/master.m3u8?token=secret';
const LEVELS = [
  { attrs: { BANDWIDTH: '800000', RESOLUTION: '640x360' } },
  { attrs: { BANDWIDTH: '2500000', RESOLUTION: '1280x720' } },
];

/** The parts of hls.js that attachShoal uses, with hls.js's real event names. */
class FakeHls {
  static Events = Events;
  config: Record<string, any> = { loader: vi.fn(function (this: any) { this.load = vi.fn(); this.abort = vi.fn(); this.destroy = vi.fn(); }), fLoader: undefined, abrEwmaDefaultEstimate: 500_000 };
  url: string | null = null;
  levels: unknown[] = [];
  media: EventTarget | null = null;
  loadLevel = 1;
  currentLevel = 1;
  targetLatency: number | null = null;
  bandwidthEstimate = 4_000_000;
  ttfbEstimate = 50;
  private readonly listeners = new Map<string, Set<(...args: any[]) => void>>();
  on(event: string, listener: (...args: any[]) => void) {
    (this.listeners.get(event) ?? this.listeners.set(event, new Set()).get(event)!).add(listener);
  }
  off(event: string, listener: (...args: any[]) => void) {
    this.listeners.get(event)?.delete(listener);
  }
  trigger(event: string, data: unknown) {
    for (const listener of [...(this.listeners.get(event) ?? [])]) listener(event, data);
  }
  listenerCount() {
    return [...this.listeners.values()].reduce((sum, set) => sum + set.size, 0);
  }
}

class FakeHttp implements HttpClient {
  readonly requests: HttpRequest[] = [];
  constructor(private readonly sizeBytes = 40_000) {}
  fetch(request: HttpRequest) {
    this.requests.push(request);
    const bytes = new Uint8Array(this.sizeBytes).fill(this.requests.length);
    const body = new Promise<Uint8Array>((resolve) =>
      setTimeout(() => {
        request.onData?.(bytes);
        resolve(bytes);
      }, 5),
    );
    return { body, abort: () => {} };
  }
}

const fragments = [0, 1, 2, 3].map((sn) => ({ sn, url: `https://origin.test/vod/720p/${sn}.ts`, start: sn * 2, duration: 2 }));

function context(sn: number | 'initSegment', overrides: Record<string, unknown> = {}): FragmentLoaderContext {
  const frag = { sn, level: 1, type: 'main', url: `https://origin.test/vod/720p/${sn}.ts`, start: Number(sn) * 2 || 0, duration: 2, ...overrides };
  return { url: frag.url, frag, part: null, responseType: 'arraybuffer' } as unknown as FragmentLoaderContext;
}

function loadThrough(hls: FakeHls, ctx: FragmentLoaderContext) {
  const loader = new hls.config.fLoader(hls.config);
  const calls: string[] = [];
  const received: { data?: ArrayBuffer; stats?: LoaderStats; error?: { code: number; text: string } } = {};
  const done = new Promise<void>((resolve) => {
    const callbacks: LoaderCallbacks<FragmentLoaderContext> = {
      onProgress: (_stats, _ctx, data) => { calls.push('progress'); received.data = data as ArrayBuffer; },
      onSuccess: (response, stats) => { calls.push('success'); expect(response.data).toBe(received.data); received.stats = stats; resolve(); },
      onError: (error) => { calls.push('error'); received.error = error; resolve(); },
      onTimeout: () => { calls.push('timeout'); resolve(); },
      onAbort: () => { calls.push('abort'); resolve(); },
    };
    loader.load(ctx, { loadPolicy: { maxLoadTimeMs: 5000 } } as any, callbacks);
  });
  return { loader, calls, received, done };
}

let shoal: ShoalHls | undefined;
afterEach(() => shoal?.destroy());

function attached(segmentBytes = 40_000) {
  const hls = new FakeHls();
  const http = new FakeHttp(segmentBytes);
  shoal = attachShoal(hls as unknown as Hls, { httpClient: http });
  hls.trigger(Events.MANIFEST_LOADING, { url: MANIFEST });
  hls.levels = LEVELS;
  hls.trigger(Events.MANIFEST_PARSED, {});
  hls.trigger(Events.LEVEL_LOADED, { level: 1, details: { live: false, fragments, edge: 8, fragmentEnd: 8 } });
  return { hls, http, shoal };
}

describe('attachShoal', () => {
  it('installs its fragment loader and loads media segments through the engine, keyed per rendition', async () => {
    const { hls, http, shoal } = attached();
    const loaded: { streamKey: string; source: string }[] = [];
    shoal.on('segment-loaded', ({ ref, source }) => loaded.push({ streamKey: ref.streamKey, source }));
    const load = loadThrough(hls, context(2));
    await load.done;
    expect(load.calls).toEqual(['progress', 'success']);
    expect(http.requests.map((request) => request.url)).toContain('https://origin.test/vod/720p/2.ts');
    expect(load.received.data!.byteLength).toBe(40_000);
    expect(load.received.stats!.loaded).toBe(40_000);
    const keys = levelStreamKeys(swarmIdFromUrl(MANIFEST), LEVELS);
    expect(loaded).toEqual([{ streamKey: keys[1], source: 'http' }]);
    expect(keys[1]).not.toContain('token=secret');
    expect(shoal.getStats().httpBytes).toBeGreaterThanOrEqual(40_000);
  });

  it('hands hls.js a buffer of its own: transferring it leaves the engine copy intact', async () => {
    const { hls } = attached();
    const first = loadThrough(hls, context(1));
    await first.done;
    // Detach it the way a transfer to hls.js's worker does.
    structuredClone(first.received.data, { transfer: [first.received.data!] });
    expect(first.received.data!.byteLength).toBe(0);
    const again = loadThrough(hls, context(1));
    await again.done;
    expect(again.received.data!.byteLength).toBe(40_000);
  });

  it("reports a store hit to hls.js's ABR at the origin throughput the engine measured", async () => {
    const { hls, shoal } = attached();
    await loadThrough(hls, context(1)).done;
    const originBytesPerS = shoal.engine.measuredHttpThroughputBytesPerS!;
    expect(originBytesPerS).toBeGreaterThan(0);
    const hit = loadThrough(hls, context(1));
    await hit.done;
    const { loading, aborted } = hit.received.stats!;
    expect(aborted).toBe(false);
    expect(loading.first - loading.start).toBe(hls.ttfbEstimate);
    expect(loading.end - loading.first).toBeCloseTo((40_000 / originBytesPerS) * 1000, 6);
  });

  it("leaves a store hit out of hls.js's ABR while the engine has timed no origin transfer", async () => {
    const { hls, shoal } = attached(20_000); // too small to time
    await loadThrough(hls, context(1)).done;
    expect(shoal.engine.measuredHttpThroughputBytesPerS).toBeUndefined();
    const hit = loadThrough(hls, context(1));
    await hit.done;
    expect(hit.calls).toEqual(['progress', 'success']);
    expect(hit.received.stats!.aborted).toBe(true);
  });

  it('leaves init segments, other playlists types and LL-HLS parts to the loader hls.js would use', () => {
    const { hls } = attached();
    for (const ctx of [context('initSegment'), context(1, { type: 'audio' }), { ...context(1), part: { index: 0 } } as FragmentLoaderContext]) {
      const loader = new hls.config.fLoader(hls.config);
      loader.load(ctx, {} as any, {} as any);
      const fallback = hls.config.loader.mock.instances.at(-1);
      expect(fallback.load).toHaveBeenCalledWith(ctx, {}, {});
      // hls.js reads frag.stats = loader.stats: the fallback writes into the same object.
      expect(fallback.stats).toBe(loader.stats);
    }
  });

  it('reports an abort to hls.js and stops the engine load', async () => {
    const { hls } = attached();
    const load = loadThrough(hls, context(3));
    load.loader.abort();
    await load.done;
    expect(load.calls).toEqual(['abort']);
    expect(load.loader.stats.aborted).toBe(true);
  });

  it('feeds playback from the media element and live edge and target latency from hls.js', () => {
    const { hls, shoal } = attached();
    const setPlayback = vi.spyOn(shoal.engine, 'setPlayback');
    hls.targetLatency = 6;
    hls.trigger(Events.LEVEL_LOADED, { level: 1, details: { live: true, fragments, edge: 8, fragmentEnd: 8 } });
    const media = Object.assign(new EventTarget(), {
      currentTime: 1, paused: false, playbackRate: 1, buffered: { length: 1, start: () => 0, end: () => 4 },
    });
    hls.trigger(Events.MEDIA_ATTACHING, { media });
    media.currentTime = 2;
    media.dispatchEvent(new Event('timeupdate'));
    expect(setPlayback).toHaveBeenLastCalledWith({ positionS: 2, rate: 1, bufferedUntilS: 4, isLive: true, liveEdgeS: 8, targetLatencyS: 6 });
    // Shoal only reads the player's latency settings.
    expect(hls.config.liveSyncDuration).toBeUndefined();
  });

  it('reports playback before the stream goes active: hls.js says it takes its media element before the manifest is parsed', () => {
    const hls = new FakeHls();
    shoal = attachShoal(hls as unknown as Hls, { httpClient: new FakeHttp() });
    const calls: string[] = [];
    vi.spyOn(shoal.engine, 'setPlayback').mockImplementation((state) => void calls.push(`playback ${state.bufferedUntilS}`));
    vi.spyOn(shoal.engine, 'setActiveStream').mockImplementation(() => void calls.push('active'));
    // hls.loadSource(), then hls.attachMedia(): MEDIA_ATTACHING at once, MEDIA_ATTACHED later.
    hls.trigger(Events.MANIFEST_LOADING, { url: MANIFEST });
    hls.media = Object.assign(new EventTarget(), { currentTime: 0, paused: true, playbackRate: 1, buffered: { length: 0, start: () => 0, end: () => 0 } });
    hls.trigger(Events.MEDIA_ATTACHING, { media: hls.media });
    hls.levels = LEVELS;
    hls.trigger(Events.MANIFEST_PARSED, {});
    // Nothing buffered is known before the swarm is joined: the engine waits to meet peers.
    expect(calls.slice(0, 2)).toEqual(['playback 0', 'active']);
  });

  it('follows level switches, and is destroyed with hls.js, giving back the original loader', () => {
    const { hls, shoal } = attached();
    const setActive = vi.spyOn(shoal.engine, 'setActiveStream');
    hls.trigger(Events.LEVEL_SWITCHING, { level: 0 });
    expect(setActive).toHaveBeenLastCalledWith(levelStreamKeys(swarmIdFromUrl(MANIFEST), LEVELS)[0]);
    const destroy = vi.spyOn(shoal.engine, 'destroy');
    hls.trigger(Events.DESTROYING, {});
    expect(destroy).toHaveBeenCalledOnce();
    expect(hls.config.fLoader).toBeUndefined();
    expect(hls.listenerCount()).toBe(0);
  });

  it('plays over HTTP where the environment has no RTCPeerConnection, and says why in stats and an event', async () => {
    expect((globalThis as { RTCPeerConnection?: unknown }).RTCPeerConnection).toBeUndefined();
    const hls = new FakeHls();
    const http = new FakeHttp();
    shoal = attachShoal(hls as unknown as Hls, { httpClient: http, trackers: ['wss://tracker.test/announce'] });
    const told: { state: string; reason: string }[] = [];
    shoal.on('p2p', (event) => told.push(event));
    hls.trigger(Events.MANIFEST_LOADING, { url: MANIFEST });
    hls.levels = LEVELS;
    hls.trigger(Events.MANIFEST_PARSED, {});
    hls.trigger(Events.LEVEL_LOADED, { level: 1, details: { live: false, fragments, edge: 8, fragmentEnd: 8 } });
    const load = loadThrough(hls, context(2));
    await load.done;
    expect(load.calls).toEqual(['progress', 'success']);
    const stats = shoal.getStats();
    expect(stats).toMatchObject({ p2p: 'unavailable', httpBytes: 40_000 });
    expect(stats.p2pReason).toMatch(/WEBRTC_UNAVAILABLE: this environment has no (WebSocket|RTCPeerConnection)/);
    expect(told).toEqual([{ state: 'unavailable', reason: stats.p2pReason, verification: 'none' }]);
  });

  it('plays over HTTP where RTCPeerConnection throws (WebRTC switched off by a privacy setting)', async () => {
    const hls = new FakeHls();
    const throwing = function RTCPeerConnection() {
      throw new DOMException('WebRTC is disabled', 'NotAllowedError');
    };
    throwing.prototype.createDataChannel = () => {};
    shoal = attachShoal(hls as unknown as Hls, {
      httpClient: new FakeHttp(),
      trackers: ['wss://tracker.test/announce'],
      signalingOptions: { RTCPeerConnection: throwing as unknown as typeof RTCPeerConnection, WebSocket: class {} as any },
    });
    expect(shoal.getStats()).toMatchObject({ p2p: 'unavailable', p2pReason: 'WEBRTC_UNAVAILABLE: RTCPeerConnection cannot be created here: WebRTC is disabled' });
  });

  it('reports P2P off, not unavailable, without trackers', async () => {
    const { shoal } = attached();
    const told: string[] = [];
    shoal.on('p2p', ({ state, reason }) => told.push(`${state}: ${reason}`));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(told).toEqual(['off: no tracker configured']);
    expect(shoal.getStats()).toMatchObject({ p2p: 'off', p2pReason: 'no tracker configured' });
  });

  it("sends a load to hls.js's own loader when the engine throws, with a warning", async () => {
    const { hls, shoal } = attached();
    const warnings: string[] = [];
    shoal.on('warning', ({ message }) => warnings.push(message));
    vi.spyOn(shoal.engine, 'loadSegment').mockImplementation(() => {
      throw new Error('engine bug');
    });
    const loader = new hls.config.fLoader(hls.config);
    loader.load(context(2), { loadPolicy: { maxLoadTimeMs: 5000 } } as any, {} as any);
    const fallback = hls.config.loader.mock.instances[0];
    expect(fallback.load).toHaveBeenCalledOnce();
    expect(warnings).toEqual(["segment 2 went to hls.js's own loader: engine bug"]);
  });

  it('refuses trackers and a custom signaling together', () => {
    const hls = new FakeHls();
    expect(() => attachShoal(hls as unknown as Hls, { trackers: ['wss://t.test'], signaling: {} as any })).toThrow(/INVALID_OPTION/);
  });
});
