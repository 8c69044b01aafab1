// Bytes a viewer downloads that it never plays: every segment should cross the network about
// once per viewer, whatever happens around it (integrity checks that lag behind the live edge,
// ABR switches, a store too small for the prefetch window).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ShoalEngine, type EngineOptionsInput } from '../src/index.js';
import type { SegmentRef } from '../src/types.js';
import { enginesDestroyedAfterEach, FakeOrigin, FakeTracker, makeSegments, peerId, UNPACED } from './fakes.js';
import { VirtualClock } from '../src/testing.js';

const SD = 'https://origin.test/live.m3u8|shoal1|bw=400000';
const HD = 'https://origin.test/live.m3u8|shoal1|bw=800000';
const MANIFEST = 'https://origin.test/live/segments-sha256.json';
const SEGMENT_S = 2;
const WINDOW = 10;
const sha256hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const nodeSha256 = async (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest());

const engines = enginesDestroyedAfterEach();

/**
 * A live origin like e2e's: one segment per rendition every 2 s, file names unique per
 * rendition, and a SHA-256 manifest (PeerTube format) that lists exactly the published segments.
 */
function liveOrigin(clock: VirtualClock, sizes: Record<string, number>) {
  const origin = new FakeOrigin(clock, 4_000_000);
  const names = new Map(Object.keys(sizes).map((key, i) => [key, `r${i}`]));
  const refFor = (streamKey: string, sequence: number): SegmentRef => ({
    streamKey, sequence, url: `https://origin.test/live/${names.get(streamKey)}-${sequence}.ts`, startS: sequence * SEGMENT_S, durationS: SEGMENT_S,
  });
  const hashes: Record<string, string> = {};
  let newest = -1;
  const publish = () => {
    newest++;
    for (const [streamKey, size] of Object.entries(sizes)) {
      const ref = refFor(streamKey, newest);
      const bytes = Uint8Array.from({ length: size }, (_, j) => (j * 13 + newest * 101 + size) & 0xff);
      origin.files.set(ref.url, bytes);
      hashes[ref.url.slice(ref.url.lastIndexOf('/') + 1)] = sha256hex(bytes);
    }
    origin.files.set(MANIFEST, new TextEncoder().encode(JSON.stringify(hashes)));
  };
  const playlist = (streamKey: string) =>
    Array.from({ length: Math.min(WINDOW, newest + 1) }, (_, i) => refFor(streamKey, newest - Math.min(WINDOW, newest + 1) + 1 + i));
  return { origin, publish, playlist, refFor, newest: () => newest };
}

interface Viewer {
  engine: ShoalEngine;
  streamKey: string;
  /** Distinct segments handed to the player, and their bytes. */
  played: Map<string, number>;
  nextSequence: number | undefined;
}

/**
 * N viewers of a live stream, each playing `behind` segments from the edge and loading up to
 * `bufferAheadS` ahead like hls.js; the test drives time in segment steps.
 */
function liveSwarm(viewerCount: number, options: EngineOptionsInput, sizes: Record<string, number>) {
  const clock = new VirtualClock();
  const live = liveOrigin(clock, sizes);
  const tracker = new FakeTracker(clock);
  const behind = 5;
  const bufferAheadS = 8;
  const viewers: Viewer[] = Array.from({ length: viewerCount }, (_, i) => {
    const engine = new ShoalEngine(
      { integrityManifestUrl: MANIFEST, latencyMode: 'normal', ...UNPACED, ...options },
      { clock, http: live.origin, signaling: tracker.signaling(peerId(i + 1)), sha256: nodeSha256 },
    );
    engines.push(engine);
    const viewer: Viewer = { engine, streamKey: SD, played: new Map(), nextSequence: undefined };
    engine.on('segment-loaded', (event) => viewer.played.set(`${event.ref.streamKey}#${event.ref.sequence}`, event.bytes));
    return viewer;
  });
  /** The player's view: playlist reload, playback position, and loads for its forward buffer. */
  const playerStep = (viewer: Viewer) => {
    const edgeS = (live.newest() + 1) * SEGMENT_S;
    const positionS = edgeS - behind * SEGMENT_S + (clock.now() % (SEGMENT_S * 1000)) / 1000;
    viewer.engine.registerStream({ streamKey: viewer.streamKey, isLive: true, segments: live.playlist(viewer.streamKey) });
    viewer.engine.setPlayback({ positionS, rate: 1, bufferedUntilS: edgeS, isLive: true, liveEdgeS: edgeS, targetLatencyS: behind * SEGMENT_S });
    viewer.nextSequence ??= Math.floor(positionS / SEGMENT_S);
    while (viewer.nextSequence * SEGMENT_S < positionS + bufferAheadS && viewer.nextSequence <= live.newest()) {
      void viewer.engine.loadSegment(live.refFor(viewer.streamKey, viewer.nextSequence)).result.catch(() => {});
      viewer.nextSequence++;
    }
  };
  const run = async (seconds: number, beforeStep?: (second: number) => void) => {
    for (let ms = 0; ms < seconds * 1000; ms += 500) {
      if (ms % (SEGMENT_S * 1000) === 0) live.publish();
      beforeStep?.(ms / 1000);
      for (const viewer of viewers) playerStep(viewer);
      await clock.advance(500);
    }
  };
  return { clock, live, viewers, run };
}

const playedBytes = (viewer: Viewer) => [...viewer.played.values()].reduce((sum, bytes) => sum + bytes, 0);

describe('waste', () => {
  it('downloads each segment about once per viewer when the integrity manifest lags behind the live edge, across an ABR switch', async () => {
    const sizes = { [SD]: 100_000, [HD]: 200_000 };
    const swarm = liveSwarm(3, {}, sizes);
    for (let i = 0; i < 12; i++) swarm.live.publish(); // a live window to join
    await swarm.run(40, (second) => {
      // Half-way, the second viewer switches up; the first stays, keeping a swarm on each side.
      if (second === 20) {
        const viewer = swarm.viewers[1]!;
        viewer.streamKey = HD;
        viewer.engine.setActiveStream(HD);
      }
    });
    for (const [i, viewer] of swarm.viewers.entries()) {
      const stats = viewer.engine.getStats();
      const played = playedBytes(viewer);
      // What it played, plus a live prefetch window (the segments between playhead and edge) of the larger rendition.
      const allowance = played + 6 * sizes[HD]!;
      expect(played, `viewer ${i} played`).toBeGreaterThan(15 * sizes[SD]!);
      expect(stats.p2pBytes + stats.httpBytes, `viewer ${i}: ${JSON.stringify(stats)}`).toBeLessThanOrEqual(allowance);
      for (const [streamKey, stream] of Object.entries(stats.streams)) {
        // A segment that came over P2P whole was received once: bytes over P2P track segments over P2P.
        expect(stream.p2pBytes, `viewer ${i} ${streamKey}`).toBeLessThanOrEqual((stream.p2pSegments + 2) * sizes[streamKey]!);
      }
    }
    const uploaded = swarm.viewers.reduce((sum, viewer) => sum + viewer.engine.getStats().uploadBytes, 0);
    const received = swarm.viewers.reduce((sum, viewer) => sum + viewer.engine.getStats().p2pBytes, 0);
    expect(received).toBeGreaterThan(0);
    expect(uploaded).toBe(received);
  });

  it('prefetches no more than the store can hold, instead of evicting and fetching again', async () => {
    const clock = new VirtualClock();
    const origin = new FakeOrigin(clock, 10_000_000);
    const tracker = new FakeTracker(clock);
    const VOD = 'https://origin.test/vod.m3u8|shoal1|bw=800000';
    const refs = makeSegments(origin, VOD, 40);
    const holder = new ShoalEngine(UNPACED, { clock, http: origin, signaling: tracker.signaling(peerId(1)) });
    engines.push(holder);
    holder.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    holder.setPlayback({ positionS: 0, rate: 0, bufferedUntilS: 0, isLive: false });
    await Promise.all(refs.map((ref) => holder.loadSegment(ref).result.catch(() => {})).concat(clock.advance(5000)));
    const viewer = new ShoalEngine({ ...UNPACED, storeBytesLimit: 2_000_000, p2pWindowS: 60 }, { clock, http: origin, signaling: tracker.signaling(peerId(2)) });
    engines.push(viewer);
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    viewer.setPlayback({ positionS: 0, rate: 0, bufferedUntilS: 0, isLive: false }); // paused: the window stays put
    await clock.advance(20_000);
    const stats = viewer.getStats();
    expect(stats.p2pBytes).toBeGreaterThan(0);
    expect(stats.p2pBytes).toBeLessThanOrEqual(2_000_000);
    expect(stats.storeBytes).toBe(stats.p2pBytes); // nothing fetched was evicted
  });
});
