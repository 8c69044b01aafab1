// Bytes a viewer downloads that it never plays: every segment should cross the network about
// once per viewer, whatever happens around it (integrity checks that lag behind the live edge,
// ABR switches, a store too small for the prefetch window).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ShoalEngine } from '../src/index.js';
import { VirtualClock } from '@shoal/sim/kit';
import { enginesDestroyedAfterEach, FakeOrigin, FakeTracker, makeSegments, peerId, UNPACED } from './fakes.js';
import { liveSwarm } from './live-swarm.js';

const SD = 'https://origin.test/live.m3u8|shoal1|bw=400000';
const HD = 'https://origin.test/live.m3u8|shoal1|bw=800000';
const MANIFEST = 'sim://origin/segments-sha256.json';
const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const nodeSha256 = async (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest());

const engines = enginesDestroyedAfterEach();

describe('waste', () => {
  it('downloads each segment about once per viewer when the integrity manifest lags behind the live edge, across an ABR switch', async () => {
    // Two renditions of 100 and 200 kB segments; the origin's SHA-256 manifest (PeerTube's format)
    // lists exactly the published segments, so the copy a viewer fetched lacks the newest ones.
    const sizes: Record<string, number> = { [SD]: 100_000, [HD]: 200_000 };
    const swarm = liveSwarm({
      viewers: 3,
      stream: {
        renditions: [{ streamKey: SD, bitrateBitsPerS: 400_000 }, { streamKey: HD, bitrateBitsPerS: 800_000 }],
        segmentDurationS: 2, sizeJitter: 0, liveWindowSize: 10, segmentCount: 40,
      },
      origin: { latencyMs: 10, perConnectionBytesPerS: 4_000_000, integrityManifest: { url: MANIFEST, sha256Hex } },
      link: { upBytesPerS: 4_000_000, downBytesPerS: Infinity, latencyMs: 5 },
      // Playing 5 segments behind the edge, loading 8 s ahead like hls.js.
      player: { liveSyncDurationCount: 5, maxBufferLengthS: 8 },
      engineOptions: () => ({ integrityManifestUrl: MANIFEST }),
      sha256: nodeSha256,
    }, engines);
    const { clock, origin, viewers } = swarm;
    await swarm.untilPlaying();
    swarm.link(viewers[0]!, viewers[1]!);
    swarm.link(viewers[0]!, viewers[2]!);
    swarm.link(viewers[1]!, viewers[2]!);
    // Half-way, the second viewer switches up; the first stays, keeping a swarm on each side.
    clock.setTimeout(() => viewers[1]!.player.switchRendition(HD), 20_000 - clock.now());
    await clock.advance(40_000 - clock.now());
    for (const [i, { engine, player }] of viewers.entries()) {
      const stats = engine.getStats();
      const played = player.record.deliveredBytes;
      console.log(`waste, viewer ${i}: played ${played} B, downloaded ${stats.httpBytes} B over HTTP + ${stats.p2pBytes} B over P2P (allowance ${played + 6 * sizes[HD]!} B)`);
      // What it played, plus a live prefetch window (the segments between playhead and edge) of the larger rendition.
      const allowance = played + 6 * sizes[HD]!;
      expect(played, `viewer ${i} played`).toBeGreaterThan(15 * sizes[SD]!);
      expect(stats.p2pBytes + stats.httpBytes, `viewer ${i}: ${JSON.stringify(stats)}`).toBeLessThanOrEqual(allowance);
      for (const [streamKey, stream] of Object.entries(stats.streams)) {
        // A segment that came over P2P whole was received once: bytes over P2P track segments over P2P.
        expect(stream.p2pBytes, `viewer ${i} ${streamKey}`).toBeLessThanOrEqual((stream.p2pSegments + 2) * sizes[streamKey]!);
      }
    }
    expect(viewers[1]!.engine.getStats().streams[HD]?.httpBytes).toBeGreaterThan(0); // the switch happened
    // The manifest lagged: viewers fetched it again for segments their copy did not list yet.
    expect(origin.counters.manifestRequests).toBeGreaterThan(viewers.length);
    const uploaded = viewers.reduce((sum, { engine }) => sum + engine.getStats().uploadBytes, 0);
    const received = viewers.reduce((sum, { engine }) => sum + engine.getStats().p2pBytes, 0);
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
    // A fast peer assumed from the start: the first segment in the window is due in 2 s, and at the
    // assumed 500 kB/s (less the planner's slack) it would not leave HTTP's budget after it. The
    // player says the rendition's bitrate (800 kbit/s: 200 kB segments, as they are).
    const viewer = new ShoalEngine(
      { ...UNPACED, storeBytesLimit: 2_000_000, p2pWindowS: 60, initialPeerThroughputBytesPerS: 2_000_000 },
      { clock, http: origin, signaling: tracker.signaling(peerId(2)) },
    );
    engines.push(viewer);
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs, bandwidthBitsPerS: 800_000 });
    viewer.setPlayback({ positionS: 0, rate: 0, bufferedUntilS: 0, isLive: false }); // paused: the window stays put
    await clock.advance(20_000);
    const stats = viewer.getStats();
    expect(stats.p2pBytes).toBeGreaterThan(0);
    expect(stats.p2pBytes).toBeLessThanOrEqual(2_000_000);
    expect(stats.storeBytes).toBe(stats.p2pBytes); // nothing fetched was evicted
  });
});
