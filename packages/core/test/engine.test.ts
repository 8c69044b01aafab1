import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ShoalEngine, type EngineOptionsInput } from '../src/index.js';
import { PROTOCOL_VERSION, decode, encode } from '../src/wire/peer-protocol.js';
import type { PlaybackReport, SegmentRef } from '../src/types.js';
import { enginesDestroyedAfterEach, FakeOrigin, FakeTracker, makeSegments, ManualSignaling, peerId, UNPACED } from './fakes.js';
import { VirtualClock, linkTransports, type SimChannelEnd } from '@shoal/sim/kit';

const VOD = 'https://origin.test/vod.m3u8|shoal1|bw=800000';
const LIVE = 'https://origin.test/live.m3u8|shoal1|bw=800000';
const vodAt = (positionS: number): PlaybackReport => ({ positionS, rate: 1, bufferedUntilS: positionS + 30, isLive: false });

/** toEqual walks typed arrays element by element: far too slow for segments. */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array | undefined) {
  expect(expected).toBeDefined();
  expect(actual.length).toBe(expected!.length);
  expect(Buffer.compare(actual, expected!), 'bytes differ').toBe(0);
}

const engines = enginesDestroyedAfterEach();

function world() {
  const clock = new VirtualClock();
  const origin = new FakeOrigin(clock);
  const tracker = new FakeTracker(clock);
  const make = (n: number, options: EngineOptionsInput = {}) => {
    const engine = new ShoalEngine({ ...UNPACED, ...options }, { clock, http: origin, signaling: tracker.signaling(peerId(n)) });
    engines.push(engine);
    return engine;
  };
  return { clock, origin, tracker, make };
}

/** An engine that has fetched `refs` from the origin and holds them. */
async function seeded(w: ReturnType<typeof world>, n: number, refs: SegmentRef[], streamKey = VOD) {
  const engine = w.make(n);
  engine.registerStream({ streamKey, isLive: false, segments: refs });
  engine.setPlayback(vodAt(0));
  for (const ref of refs) {
    const load = engine.loadSegment(ref);
    await w.clock.advance(1000);
    expect((await load.result).source).toBe('http');
  }
  return engine;
}

/** A holder (with `options`) that fetched refs[sequence] from the origin, and a viewer that joined 200 ms after (`joinedMs`: when it was made). */
async function holderAndViewer(w: ReturnType<typeof world>, refs: SegmentRef[], options: EngineOptionsInput, sequence: number) {
  const holder = w.make(1, options);
  holder.registerStream({ streamKey: VOD, isLive: false, segments: refs });
  holder.setPlayback(vodAt(0));
  const own = holder.loadSegment(refs[sequence]!);
  await w.clock.advance(1000);
  await own.result;
  const joinedMs = w.clock.now();
  const viewer = w.make(2);
  viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
  viewer.setPlayback(vodAt(0));
  await w.clock.advance(200);
  return { holder, viewer, joinedMs };
}

describe('engine', () => {
  it('fetches the urgent segment over HTTP when no peer can deliver in time', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 10);
    w.tracker.link = { bytesPerS: 20_000, latencyMs: 10 }; // a peer at 20 KB/s: 10 s for a segment
    await seeded(w, 1, refs);
    const viewer = w.make(2, { initialPeerThroughputBytesPerS: 20_000 });
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    viewer.setPlayback(vodAt(0));
    await w.clock.advance(200);
    expect(viewer.getStats().peers).toBe(1);
    const load = viewer.loadSegment(refs[1]!); // needed in 2 s
    await w.clock.advance(2000);
    const result = await load.result;
    expect(result.source).toBe('http');
    expectSameBytes(result.bytes, w.origin.files.get(refs[1]!.url));
    // The whole segment from the origin (the holder's copy and the viewer's), no P2P part of it with a
    // Range request for the rest (later segments may prefetch from the peer meanwhile).
    expect(w.origin.requestsFor(refs[1]!.url).map((request) => request.range)).toEqual([undefined, undefined]);
  });

  it('loads a segment in the P2P window from the peer that has it', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 10);
    const holder = await seeded(w, 1, refs.slice(0, 4));
    const viewer = w.make(2);
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    viewer.setPlayback(vodAt(0));
    await w.clock.advance(200);
    const loaded: string[] = [];
    viewer.on('segment-loaded', (event) => loaded.push(`${event.ref.sequence}:${event.source}`));
    const load = viewer.loadSegment(refs[3]!); // needed in 6 s; the holder has it
    await w.clock.advance(3000);
    const result = await load.result;
    expect(result.source).toBe('p2p');
    expectSameBytes(result.bytes, w.origin.files.get(refs[3]!.url));
    expect(w.origin.requestsFor(refs[3]!.url)).toHaveLength(1); // only the holder's
    expect(loaded).toContain('3:p2p');
    expect(viewer.getStats()).toMatchObject({ httpBytes: 0, peers: 1 });
    expect(viewer.getStats().p2pBytes).toBeGreaterThanOrEqual(200_000);
    expect(holder.getStats().uploadBytes).toBe(viewer.getStats().p2pBytes);
    expect(result.timing.doneMs).toBeGreaterThanOrEqual(result.timing.firstByteMs);
    expect(result.timing.firstByteMs).toBeGreaterThanOrEqual(result.timing.requestMs);
    expect(result.timing.origin).toBeUndefined();
  });

  it('prefetches ahead of the playhead over P2P only, within the window, and serves it from the store', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 60);
    await seeded(w, 1, refs.slice(0, 40));
    const viewer = w.make(2, { latencyMode: 'normal', p2pWindowS: 40 }); // normal: 20 s ahead
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    viewer.setPlayback({ ...vodAt(0), rate: 0 }); // paused: the window stays put
    await w.clock.advance(10_000);
    const stats = viewer.getStats();
    expect(stats.httpBytes).toBe(0);
    // segments 1..9 start within 20 s; segment 0, at the playhead, is urgent: left to the player's request
    expect(stats.p2pBytes).toBe(9 * 200_000);
    const result = await viewer.loadSegment(refs[5]!).result;
    expect(result.source).toBe('store');
    expectSameBytes(result.bytes, w.origin.files.get(refs[5]!.url));
  });

  it('cancels a slow P2P transfer and finishes it over HTTP Range with the exact bytes', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 10);
    w.tracker.link = { bytesPerS: 20_000, latencyMs: 10 };
    await seeded(w, 1, [refs[3]!]);
    const viewer = w.make(2); // assumes 500 KB/s from a new peer: P2P looks fine at first
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    viewer.setPlayback(vodAt(0));
    await w.clock.advance(200);
    const start = w.clock.now();
    const load = viewer.loadSegment(refs[3]!); // needed 6 s from now
    await w.clock.advance(6000);
    const result = await load.result;
    expectSameBytes(result.bytes, w.origin.files.get(refs[3]!.url));
    expect(result.timing.doneMs - start).toBeLessThan(5800); // before the player needs it
    const stats = viewer.getStats();
    expect(stats.p2pBytes).toBeGreaterThan(0);
    const resume = w.origin.requestsFor(refs[3]!.url).at(-1)!;
    expect(resume.range).toEqual({ start: stats.p2pBytes, end: 200_000 });
    expect(stats.httpBytes).toBe(200_000 - stats.p2pBytes);
  });

  it('resumes over HTTP when a peer leaves mid-transfer, without a stall', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 10);
    w.tracker.link = { bytesPerS: 100_000, latencyMs: 10 };
    const holder = await seeded(w, 1, refs.slice(0, 4));
    const viewer = w.make(2);
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    viewer.setPlayback(vodAt(0));
    await w.clock.advance(200);
    const load = viewer.loadSegment(refs[3]!);
    await w.clock.advance(700);
    holder.destroy();
    await w.clock.advance(2000);
    const result = await load.result;
    expectSameBytes(result.bytes, w.origin.files.get(refs[3]!.url));
    expect(viewer.getStats().peers).toBe(0);
  });

  it('does not ask a peer again for a segment it cancelled there, whose chunks may still be on the way', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 10);
    const other = 'https://origin.test/vod.m3u8|shoal1|bw=1600000';
    w.tracker.link = { bytesPerS: 100_000, latencyMs: 10 }; // 2 s per segment: chunks queue in the channel
    const holder = await seeded(w, 1, refs.slice(0, 4));
    const viewer = w.make(2);
    const banned: string[] = [];
    viewer.on('peer-banned', (event) => banned.push(event.reason));
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    viewer.registerStream({ streamKey: other, isLive: false, segments: makeSegments(w.origin, other, 10) });
    viewer.setPlayback({ ...vodAt(0), rate: 0 });
    await w.clock.advance(800); // prefetching segment 1 from the holder, part-way
    expect(viewer.getStats().p2pBytes).toBeGreaterThan(0);
    // A quick switch away and back: the transfer of the rendition left is cancelled, then wanted again.
    viewer.setActiveStream(other);
    await w.clock.advance(30);
    viewer.setActiveStream(VOD);
    await w.clock.advance(20_000);
    expect(banned).toEqual([]);
    // The player plays again and asks for them: what the cancel left unfetched comes now (from the
    // holder, or the origin where the holder cannot make it in time: its uplink is 2 s a segment).
    viewer.setPlayback(vodAt(0));
    const loads = refs.slice(1, 4).map((ref) => viewer.loadSegment(ref));
    await w.clock.advance(8000);
    for (const [i, load] of loads.entries()) expectSameBytes((await load.result).bytes, w.origin.files.get(refs[i + 1]!.url));
    expect(viewer.getStats().p2pBytes).toBeLessThanOrEqual(holder.getStats().uploadBytes);
  });

  it('never uploads the buffer it handed to the player, even once the player detached it', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 4);
    const first = w.make(1);
    first.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    first.setPlayback(vodAt(0));
    const load = first.loadSegment(refs[2]!);
    await w.clock.advance(1000);
    const given = (await load.result).bytes;
    structuredClone(given.buffer, { transfer: [given.buffer] }); // hls.js hands it to its worker
    expect(given.byteLength).toBe(0);
    const viewer = w.make(2);
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    viewer.setPlayback(vodAt(0));
    await w.clock.advance(200);
    const p2p = viewer.loadSegment(refs[2]!);
    await w.clock.advance(2000);
    const result = await p2p.result;
    expect(result.source).toMatch(/p2p|store/); // prefetched or loaded on request: from the peer either way
    expect(viewer.getStats()).toMatchObject({ httpBytes: 0, p2pBytes: 200_000 });
    expectSameBytes(result.bytes, w.origin.files.get(refs[2]!.url));
  });

  it('caps upload at uploadRateLimitBytesPerS', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 30);
    const { holder, viewer, joinedMs: start } = await holderAndViewer(w, refs, { uploadRateLimitBytesPerS: 100_000 }, 20);
    const load = viewer.loadSegment(refs[20]!); // needed in 40 s
    await w.clock.advance(5000);
    const result = await load.result;
    expect(result.source).toMatch(/p2p|store/);
    // 200 KB at 100 KB/s with a full one-second bucket: at least one second
    expect(result.timing.doneMs - start).toBeGreaterThanOrEqual(1000);
    expect(holder.getStats().uploadBytes).toBe(200_000);
  });

  it('leaves the download its player waits on the uplink its acknowledgements need, and uploads at full pace again after it', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 30);
    const { holder, viewer } = await holderAndViewer(w, refs, { uploadRateLimitBytesPerS: 50_000 }, 20);
    const load = viewer.loadSegment(refs[20]!); // 200 kB at 50 kB/s: 4 s of uploading
    await w.clock.advance(1000);
    expect(holder.getStats().upload.downloadReserveBytesPerS).toBe(0);
    const before = holder.getStats().uploadBytes;
    expect(before).toBeGreaterThan(0);
    // The holder's player waits on a download of 2 s; its acknowledgements at the 2 MB/s it first measured need 100 kB/s.
    w.origin.bytesPerS = 100_000;
    const next = holder.loadSegment(refs[1]!);
    await w.clock.advance(100);
    // 40% of the pace at most: uploads slow down for it, and go on.
    expect(holder.getStats().upload.downloadReserveBytesPerS).toBe(20_000);
    const slowed = holder.getStats().uploadBytes;
    await w.clock.advance(1000);
    expect(holder.getStats().uploadBytes - slowed).toBeGreaterThan(20_000);
    expect(holder.getStats().uploadBytes - slowed).toBeLessThan(40_000);
    await w.clock.advance(1500);
    expect((await next.result).source).toBe('http');
    expect(holder.getStats().upload.downloadReserveBytesPerS).toBe(0);
    await w.clock.advance(5000);
    expect((await load.result).source).toBe('p2p');
    expect(holder.getStats().uploadBytes).toBe(200_000);
  });

  it('serves nothing with upload off', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 30);
    const { holder, viewer } = await holderAndViewer(w, refs, { upload: false }, 10);
    const load = viewer.loadSegment(refs[10]!);
    await w.clock.advance(3000);
    expect((await load.result).source).toBe('http');
    expect(holder.getStats().uploadBytes).toBe(0);
  });

  it('joins one swarm per rendition and asks for peers while below target', async () => {
    const w = world();
    const engine = w.make(1, { targetPeers: 3 });
    const hd = 'https://origin.test/live.m3u8|shoal1|bw=5000000';
    engine.registerStream({ streamKey: LIVE, isLive: true, segments: makeSegments(w.origin, LIVE, 3) });
    engine.registerStream({ streamKey: hd, isLive: true, segments: makeSegments(w.origin, hd, 3) });
    const signaling = w.tracker.signaling(peerId(1));
    expect(signaling).toBeDefined();
    expect(w.tracker.swarms.size).toBe(1); // only the active rendition
    engine.setActiveStream(hd);
    expect(w.tracker.swarms.size).toBe(2);
    engine.setPlayback({ positionS: 0, rate: 1, bufferedUntilS: 0, isLive: true, liveEdgeS: 6 });
    const before = w.tracker.peerRequests;
    await w.clock.advance(12_000);
    expect(w.tracker.peerRequests).toBeGreaterThan(before);
  });

  it('joins the swarm before its first loads, and asks for more peers once the player has its low mark buffered, or after 10 s of waiting for it', async () => {
    const low: PlaybackReport = { positionS: 0, rate: 1, bufferedUntilS: 0, isLive: true, liveEdgeS: 6 };
    const starting = world();
    const engine = starting.make(1, { targetPeers: 3 });
    engine.setPlayback(low); // autoplay, nothing buffered yet: more handshakes would delay its first segments
    engine.registerStream({ streamKey: LIVE, isLive: true, segments: makeSegments(starting.origin, LIVE, 3) });
    await starting.clock.advance(6000);
    expect(starting.tracker.swarms.size).toBe(1); // announced: its first segments may come from peers
    expect(starting.tracker.peerRequests).toBe(0); // below target, but asking waits for the player
    engine.setPlayback({ ...low, positionS: 1, bufferedUntilS: 5 });
    await starting.clock.advance(10);
    expect(starting.tracker.peerRequests).toBe(1);

    const stuck = world();
    const waiting = stuck.make(1, { targetPeers: 3 });
    waiting.setPlayback(low);
    waiting.registerStream({ streamKey: LIVE, isLive: true, segments: makeSegments(stuck.origin, LIVE, 3) });
    await stuck.clock.advance(9000);
    expect(stuck.tracker.peerRequests).toBe(0);
    await stuck.clock.advance(1500); // the origin may be what holds the player up: peers could help
    expect(stuck.tracker.peerRequests).toBe(1);
  });

  it('counts a peer met in two rendition swarms once at the top level, and once in each stream', async () => {
    const w = world();
    const hd = 'https://origin.test/live.m3u8|shoal1|bw=5000000';
    const both = [w.make(1), w.make(2)];
    for (const engine of both) {
      engine.registerStream({ streamKey: LIVE, isLive: true, segments: makeSegments(w.origin, LIVE, 3) });
      engine.registerStream({ streamKey: hd, isLive: true, segments: makeSegments(w.origin, hd, 3) });
      engine.setActiveStream(hd); // the previous rendition's swarm stays joined
    }
    await w.clock.advance(500);
    for (const engine of both) {
      const stats = engine.getStats();
      expect(stats.peers).toBe(1);
      expect(stats.streams[LIVE]!.peers).toBe(1);
      expect(stats.streams[hd]!.peers).toBe(1);
    }
  });

  it('leaves no timer, peer or swarm after destroy()', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 10);
    const holder = await seeded(w, 1, refs.slice(0, 4));
    w.origin.bytesPerS = 100_000;
    const signaling = w.tracker.signaling(peerId(2));
    const viewer = new ShoalEngine(UNPACED, { clock: w.clock, http: w.origin, signaling });
    viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    viewer.setPlayback(vodAt(0));
    await w.clock.advance(200);
    const pending = viewer.loadSegment(refs[8]!);
    const waiting = viewer.loadSegment(refs[9]!);
    const outcomes = Promise.allSettled([pending.result, waiting.result]);
    await w.clock.advance(100);
    viewer.destroy();
    holder.destroy();
    const [first, second] = await outcomes;
    expect(first).toMatchObject({ status: 'rejected', reason: { code: 'DESTROYED' } });
    expect(second).toMatchObject({ status: 'rejected', reason: { code: 'DESTROYED' } });
    expect(signaling.destroyed).toBe(true);
    expect(signaling.swarms.every((swarm) => swarm.left)).toBe(true);
    await w.clock.advance(10_000); // let the simulated network drain
    expect(w.clock.pending).toBe(0);
    for (const [a, b] of w.tracker.links.values()) expect([a!.closed, b!.closed]).toEqual([true, true]);
    expect(() => viewer.registerStream({ streamKey: VOD, isLive: false, segments: refs })).toThrow('DESTROYED');
  });

  it('aborts a load: the result rejects with ABORTED and its HTTP transfer stops', async () => {
    const w = world();
    const refs = makeSegments(w.origin, VOD, 4, 2_000_000);
    const engine = w.make(1);
    engine.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    engine.setPlayback(vodAt(0));
    const load = engine.loadSegment(refs[0]!);
    await w.clock.advance(100);
    load.abort();
    await expect(load.result).rejects.toMatchObject({ code: 'ABORTED' });
    const served = w.origin.bytesServed;
    await w.clock.advance(2000);
    expect(w.origin.bytesServed).toBe(served);
  });

  it('measures origin throughput from its own HTTP transfers only, with no assumed start value', async () => {
    const w = world();
    w.origin.bytesPerS = 500_000;
    const refs = makeSegments(w.origin, VOD, 3);
    const engine = w.make(1, { initialHttpThroughputBytesPerS: 50_000_000 });
    engine.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    engine.setPlayback(vodAt(0));
    expect(engine.measuredHttpThroughputBytesPerS).toBeUndefined();
    const load = engine.loadSegment(refs[0]!);
    await w.clock.advance(1000);
    const { source, timing } = await load.result;
    expect(source).toBe('http');
    // The origin request that delivered it, for the player's ABR: 20 ms of latency, then a 64 KiB first chunk.
    expect(timing.origin!.firstByteMs - timing.origin!.requestMs).toBeCloseTo(20 + (65_536 / 500_000) * 1000, 6);
    expect(timing.origin!.requestMs).toBeGreaterThanOrEqual(timing.requestMs);
    // 200 kB in 20 ms of latency + 400 ms of transfer: 476 kB/s, not pulled towards the assumed 50 MB/s.
    expect(engine.measuredHttpThroughputBytesPerS).toBeGreaterThan(450_000);
    expect(engine.measuredHttpThroughputBytesPerS).toBeLessThan(500_000);
  });
});

describe('live-edge seeding', () => {
  async function liveSwarm(viewers: number, options: EngineOptionsInput = {}) {
    const w = world();
    const refs = makeSegments(w.origin, LIVE, 20);
    const all = Array.from({ length: viewers }, (_, i) => w.make(i + 1, options));
    for (const engine of all) {
      engine.registerStream({ streamKey: LIVE, isLive: true, segments: refs.slice(0, 10) });
      engine.setPlayback({ positionS: 10, rate: 0, bufferedUntilS: 10, isLive: true, liveEdgeS: 20, targetLatencyS: 10 });
    }
    await w.clock.advance(500);
    for (const engine of all) expect(engine.getStats().peers).toBe(viewers - 1);
    return { w, refs, all };
  }

  it('elects a small, stable number of origin fetchers per live segment', async () => {
    const { w, refs, all } = await liveSwarm(6);
    const fetchers = new Set<number>();
    for (let sequence = 10; sequence < 15; sequence++) {
      for (const engine of all) engine.registerStream({ streamKey: LIVE, isLive: true, segments: refs.slice(sequence - 9, sequence + 1) });
      await w.clock.advance(2000);
      const url = refs[sequence]!.url;
      expect(w.origin.requestsFor(url), `segment ${sequence}`).toHaveLength(1);
      for (const [i, engine] of all.entries()) {
        const result = await engine.loadSegment(refs[sequence]!).result;
        expect(result.source, `viewer ${i}, segment ${sequence}`).toBe('store');
        expectSameBytes(result.bytes, w.origin.files.get(url));
      }
      fetchers.add(w.origin.requestsFor(url).length);
    }
    const totals = all.map((engine) => engine.getStats());
    const originBytes = totals.reduce((sum, stats) => sum + stats.httpBytes, 0);
    const p2pBytes = totals.reduce((sum, stats) => sum + stats.p2pBytes, 0);
    expect(originBytes).toBe(5 * 200_000);
    expect(p2pBytes).toBe(5 * 5 * 200_000);
  });

  it('elects as many origin fetchers as seedersPerSegment', async () => {
    const { w, refs, all } = await liveSwarm(6, { seedersPerSegment: 2 });
    for (const engine of all) engine.registerStream({ streamKey: LIVE, isLive: true, segments: refs.slice(1, 11) });
    await w.clock.advance(2000);
    expect(w.origin.requestsFor(refs[10]!.url)).toHaveLength(2);
  });

  /** A live viewer at position 10 s of 20 whose only peer connects, says it uploads, and never has anything. */
  async function liveViewerWithSilentPeer() {
    const w = world();
    const refs = makeSegments(w.origin, LIVE, 20);
    const viewer = w.make(1);
    viewer.registerStream({ streamKey: LIVE, isLive: true, segments: refs.slice(0, 10) });
    viewer.setPlayback({ positionS: 10, rate: 1, bufferedUntilS: 12, isLive: true, liveEdgeS: 20, targetLatencyS: 10 });
    const [mine, theirs] = linkTransports(w.clock, peerId(1), peerId(2), { bytesPerS: 1e6, latencyMs: 10 });
    theirs.setEvents({ message: () => {}, close: () => {}, drain: () => {} });
    theirs.send(encode({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true }));
    theirs.send(encode({ type: 'availability', firstSequence: 0, states: [] }));
    w.tracker.swarms.values().next().value![0]!.events.peer(mine);
    await w.clock.advance(100);
    return { w, refs, viewer };
  }

  it('falls back to HTTP within the time budget when the elected fetcher never delivers', async () => {
    const { w, refs, viewer } = await liveViewerWithSilentPeer();
    const load = viewer.loadSegment(refs[7]!); // needed in 4 s; nobody has it; live: wait, then HTTP
    await w.clock.advance(1000);
    expect(w.origin.requestsFor(refs[7]!.url)).toHaveLength(0);
    await w.clock.advance(3000);
    const result = await load.result;
    expect(result.source).toBe('http');
    expect(result.timing.doneMs).toBeLessThanOrEqual(w.clock.now());
    expect(result.timing.doneMs - result.timing.requestMs).toBeLessThan(4000);
  });

  it('still answers a load waiting for peers whose segment slid out of the live playlist before any transfer of it started', async () => {
    const { w, refs, viewer } = await liveViewerWithSilentPeer();
    const load = viewer.loadSegment(refs[7]!);
    let settled = false;
    load.result.then(() => (settled = true), () => (settled = true));
    await w.clock.advance(500);
    expect(w.origin.requestsFor(refs[7]!.url)).toHaveLength(0);
    viewer.registerStream({ streamKey: LIVE, isLive: true, segments: refs.slice(8, 18) });
    await w.clock.advance(5000);
    expect(settled).toBe(true);
    expectSameBytes((await load.result).bytes, w.origin.files.get(refs[7]!.url));
  });
});

describe('hostile peers', () => {
  async function hostileSetup(options: EngineOptionsInput = {}, manifest?: Record<string, string>) {
    const clock = new VirtualClock();
    const origin = new FakeOrigin(clock);
    const signaling = new ManualSignaling(peerId(1));
    if (manifest) origin.files.set('https://origin.test/sha256.json', new TextEncoder().encode(JSON.stringify(manifest)));
    const engine = new ShoalEngine({ ...UNPACED, ...options }, { clock, http: origin, signaling });
    engines.push(engine);
    const refs = makeSegments(origin, VOD, 10);
    engine.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    engine.setPlayback(vodAt(0));
    const banned: string[] = [];
    engine.on('peer-banned', (event) => banned.push(event.peerId));
    const received: ReturnType<typeof decode>[] = [];
    /** Connects a scripted peer; `reply` answers each request. */
    const connect = (id: number, reply: (sequence: number, remote: SimChannelEnd) => void) => {
      const [mine, theirs] = linkTransports(clock, peerId(1), peerId(id), { bytesPerS: 1e6, latencyMs: 5 });
      theirs.setEvents({
        message: (data) => {
          const message = decode(data);
          received.push(message);
          if (message.ok && message.message.type === 'request') reply(message.message.sequence, theirs);
        },
        close: () => {},
        drain: () => {},
      });
      signaling.events!.peer(mine);
      return theirs;
    };
    const handshake = (remote: SimChannelEnd, has: number[]) => {
      remote.send(encode({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true }));
      remote.send(encode({ type: 'availability', firstSequence: 0, states: Array.from({ length: 10 }, (_, i) => (has.includes(i) ? 1 : 0)) }));
    };
    const sendSegment = (remote: SimChannelEnd, sequence: number, bytes: Uint8Array) => {
      for (let offset = 0; offset < bytes.length; offset += 16_384) {
        remote.send(encode({ type: 'data', sequence, offset, totalBytes: bytes.length, payload: bytes.subarray(offset, offset + 16_384) }));
      }
      remote.send(encode({ type: 'done', sequence, totalBytes: bytes.length }));
    };
    return { clock, origin, engine, refs, banned, connect, handshake, sendSegment, received, signaling };
  }

  it('bans a peer that sends a malformed message, and the player is still served over HTTP', async () => {
    const t = await hostileSetup();
    const remote = t.connect(66, () => {});
    t.handshake(remote, [3]);
    remote.send(new Uint8Array([0x03, 0x00])); // a truncated have
    await t.clock.advance(100);
    expect(t.banned).toEqual([peerId(66)]);
    expect(remote.closed).toBe(true);
    const load = t.engine.loadSegment(t.refs[3]!);
    await t.clock.advance(2000);
    expectSameBytes((await load.result).bytes, t.origin.files.get(t.refs[3]!.url));
    // banned for the rest of the playback: a reconnect is refused
    const again = t.connect(66, () => {});
    await t.clock.advance(50);
    expect(again.closed).toBe(true);
    expect(t.engine.getStats().bannedPeers).toBe(1);
  });

  it.each([
    ['a chunk at the wrong offset', (remote: SimChannelEnd, sequence: number) =>
      remote.send(encode({ type: 'data', sequence, offset: 16_384, totalBytes: 200_000, payload: new Uint8Array(100) }))],
    ['done before all bytes', (remote: SimChannelEnd, sequence: number) => {
      remote.send(encode({ type: 'data', sequence, offset: 0, totalBytes: 200_000, payload: new Uint8Array(100) }));
      remote.send(encode({ type: 'done', sequence, totalBytes: 200_000 }));
    }],
    ['data for a segment never requested', (remote: SimChannelEnd) =>
      remote.send(encode({ type: 'data', sequence: 9, offset: 0, totalBytes: 10, payload: new Uint8Array(10) }))],
    ['a changed segment size', (remote: SimChannelEnd, sequence: number) => {
      remote.send(encode({ type: 'data', sequence, offset: 0, totalBytes: 200_000, payload: new Uint8Array(100) }));
      remote.send(encode({ type: 'data', sequence, offset: 100, totalBytes: 300_000, payload: new Uint8Array(100) }));
    }],
    ['an oversized message', (remote: SimChannelEnd) => remote.send(new Uint8Array(20_000).fill(5))],
  ])('bans a peer that sends %s and serves the exact bytes over HTTP', async (_name, misbehave) => {
    const t = await hostileSetup();
    const remote = t.connect(66, (sequence, peer) => misbehave(peer, sequence));
    t.handshake(remote, [3]);
    await t.clock.advance(50);
    const load = t.engine.loadSegment(t.refs[3]!);
    await t.clock.advance(3000);
    const result = await load.result;
    expect(t.banned).toEqual([peerId(66)]);
    expect(result.source).toBe('http');
    expectSameBytes(result.bytes, t.origin.files.get(t.refs[3]!.url));
  });

  it('refuses a first chunk that sizes the segment far beyond what its bitrate allows: no copy of that size, the exact bytes over HTTP', async () => {
    const t = await hostileSetup();
    // 64 MiB less a byte, where 2 s at the assumed 2 Mbit/s is 500 kB (the bound: 4 times that and 1 MiB).
    const remote = t.connect(69, (sequence, peer) => peer.send(encode({ type: 'data', sequence, offset: 0, totalBytes: 64 * 1024 * 1024 - 1, payload: new Uint8Array(1000) })));
    const other = t.connect(70, () => {});
    t.handshake(remote, [3]);
    t.handshake(other, []);
    await t.clock.advance(50);
    const load = t.engine.loadSegment(t.refs[3]!);
    await t.clock.advance(3000);
    const result = await load.result;
    expect(result.source).toBe('http');
    expectSameBytes(result.bytes, t.origin.files.get(t.refs[3]!.url));
    // Nothing of the claimed size was taken: no relay of it was offered to the other peers.
    const progress = t.received.filter((message) => message.ok && message.message.type === 'progress');
    expect(progress.map((message) => message.ok && message.message.type === 'progress' && message.message.totalBytes)).not.toContain(64 * 1024 * 1024 - 1);
  });

  it('bans a peer that says it has segments that are not out yet', async () => {
    const t = await hostileSetup();
    const remote = t.connect(67, () => {});
    remote.send(encode({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true }));
    // The playlist ends at 9; it claims 0..199.
    remote.send(encode({ type: 'availability', firstSequence: 0, states: Array.from({ length: 200 }, () => 1 as const) }));
    await t.clock.advance(50);
    expect(t.banned).toEqual([peerId(67)]);
    expect(remote.closed).toBe(true);
  });

  it('does not wait for a holder that failed it: after a silent transfer, the next requested segment goes over HTTP at once', async () => {
    const t = await hostileSetup();
    const remote = t.connect(68, () => {}); // accepts requests, never sends a byte
    t.handshake(remote, [3, 4]);
    await t.clock.advance(50);
    const first = t.engine.loadSegment(t.refs[3]!);
    const httpOf = (sequence: number) => t.origin.requests.filter((request) => request.url === t.refs[sequence]!.url);
    while (httpOf(3).length === 0) await t.clock.advance(50);
    expect((await Promise.race([first.result, t.clock.advance(3000).then(() => first.result)])).source).toBe('http');
    const askedAtMs = t.clock.now();
    const second = t.engine.loadSegment(t.refs[4]!);
    await t.clock.advance(200);
    expect(httpOf(4).map((request) => request.atMs - askedAtMs)).toEqual([0]);
    expect((await Promise.race([second.result, t.clock.advance(3000).then(() => second.result)])).source).toBe('http');
    expect(t.received.filter((message) => message.ok && message.message.type === 'request').length).toBe(1);
  });

  it('closes without a ban a peer that speaks another protocol version', async () => {
    const t = await hostileSetup();
    const remote = t.connect(70, () => {});
    remote.send(encode({ type: 'handshake', version: PROTOCOL_VERSION + 1, uploads: true }));
    await t.clock.advance(50);
    expect(remote.closed).toBe(true);
    expect(t.banned).toEqual([]);
  });
});

describe('segment validation', () => {
  const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

  type ManifestOf = (files: Map<string, Uint8Array>) => Record<string, string>;
  /** A peer that has segment 4 serves it (corrupted or not); `lateManifest` replaces the manifest 1 s in, as a live origin's grows. */
  async function deliver(options: EngineOptionsInput, corrupt: boolean, manifest?: ManifestOf, lateManifest?: ManifestOf) {
    const clock = new VirtualClock();
    const origin = new FakeOrigin(clock);
    const signaling = new ManualSignaling(peerId(1));
    const refs = makeSegments(origin, VOD, 10);
    if (manifest) origin.files.set('https://origin.test/sha256.json', new TextEncoder().encode(JSON.stringify(manifest(origin.files))));
    // Node's hash resolves within the virtual clock's microtask flushes; Web Crypto runs on a thread pool.
    const nodeSha256 = async (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest());
    const engine = new ShoalEngine({ ...UNPACED, ...options }, { clock, http: origin, signaling, sha256: nodeSha256 });
    engines.push(engine);
    engine.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    engine.setPlayback(vodAt(0));
    const banned: string[] = [];
    engine.on('peer-banned', (event) => banned.push(event.reason));
    let peerRequests = 0;
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(5), { bytesPerS: 1e6, latencyMs: 5 });
    theirs.setEvents({
      message: (data) => {
        const message = decode(data);
        if (!message.ok || message.message.type !== 'request') return;
        peerRequests++;
        const sequence = message.message.sequence;
        const bytes = origin.files.get(refs[sequence]!.url)!.slice();
        if (corrupt) bytes[1000] = bytes[1000]! ^ 0xff;
        for (let offset = 0; offset < bytes.length; offset += 16_384) {
          theirs.send(encode({ type: 'data', sequence, offset, totalBytes: bytes.length, payload: bytes.subarray(offset, offset + 16_384) }));
        }
        theirs.send(encode({ type: 'done', sequence, totalBytes: bytes.length }));
      },
      close: () => {},
      drain: () => {},
    });
    signaling.events!.peer(mine);
    theirs.send(encode({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true }));
    theirs.send(encode({ type: 'availability', firstSequence: 0, states: [0, 0, 0, 0, 1] }));
    if (lateManifest) {
      clock.setTimeout(() => origin.files.set('https://origin.test/sha256.json', new TextEncoder().encode(JSON.stringify(lateManifest(origin.files)))), 1000);
    }
    await clock.advance(50);
    const load = engine.loadSegment(refs[4]!); // needed in 8 s
    await clock.advance(7000);
    const result = await load.result;
    expectSameBytes(result.bytes, origin.files.get(refs[4]!.url)); // the player only ever sees good bytes
    return { result, banned, origin, refs, peerRequests, stats: engine.getStats() };
  }

  it('hands P2P bytes to the player once validateSegment returns true', async () => {
    const seen: number[] = [];
    const { result, banned } = await deliver({ validateSegment: (ref) => (seen.push(ref.sequence), true) }, false);
    expect(result.source).toBe('p2p');
    expect(seen).toEqual([4]);
    expect(banned).toEqual([]);
  });

  it('bans the peer and refetches over HTTP when validateSegment returns false (or a promise of false)', async () => {
    for (const validateSegment of [() => false, async () => false]) {
      const { result, banned } = await deliver({ validateSegment }, true);
      expect(result.source).toBe('http');
      expect(banned).toEqual(['segment 4 failed verification']);
    }
  });

  it('counts a validateSegment that throws as false', async () => {
    const { result, banned } = await deliver({ validateSegment: () => { throw new Error('boom'); } }, false);
    expect(result.source).toBe('http');
    expect(banned).toHaveLength(1);
  });

  it('treats undefined from validateSegment as no opinion: accepted when there is no manifest', async () => {
    const { result, banned } = await deliver({ validateSegment: () => undefined }, false);
    expect(result.source).toBe('p2p');
    expect(banned).toEqual([]);
  });

  it('treats undefined from validateSegment as no opinion: the SHA-256 manifest decides', async () => {
    const manifest = (files: Map<string, Uint8Array>) =>
      Object.fromEntries([...files].map(([url, bytes]) => [url.slice(url.lastIndexOf('/') + 1), sha256(bytes)]));
    const options = { validateSegment: () => undefined, integrityManifestUrl: 'https://origin.test/sha256.json' };
    const good = await deliver(options, false, manifest);
    expect(good.result.source).toBe('p2p');
    expect(good.banned).toEqual([]);
    const bad = await deliver(options, true, manifest);
    expect(bad.result.source).toBe('http');
    expect(bad.banned).toHaveLength(1);
  });

  it('refetches over HTTP without a ban when the manifest has no entry for the segment, downloading it from the peer only once', async () => {
    const { result, banned, origin, peerRequests, stats } = await deliver({ integrityManifestUrl: 'https://origin.test/sha256.json' }, false, () => ({}));
    expect(result.source).toBe('http');
    expect(banned).toEqual([]);
    expect(origin.requestsFor('https://origin.test/sha256.json').length).toBeGreaterThanOrEqual(2); // looked again before giving up
    expect(peerRequests).toBe(1);
    expect(stats.p2pBytes).toBe(200_000);
  });

  it('keeps P2P bytes that a lagging manifest does not list yet, and hands them over once it does', async () => {
    const manifest = (files: Map<string, Uint8Array>) =>
      Object.fromEntries([...files].map(([url, bytes]) => [url.slice(url.lastIndexOf('/') + 1), sha256(bytes)]));
    const { result, banned, peerRequests, stats } = await deliver({ integrityManifestUrl: 'https://origin.test/sha256.json' }, false, () => ({}), manifest);
    expect(result.source).toBe('p2p');
    expect(banned).toEqual([]);
    expect(peerRequests).toBe(1);
    expect(stats).toMatchObject({ p2pBytes: 200_000, httpBytes: 0 });
  });

  it('reads byte-range entries of a PeerTube manifest with inclusive ends', async () => {
    const { SegmentVerifier } = await import('../src/store/integrity.js');
    const clock = new VirtualClock();
    const origin = new FakeOrigin(clock);
    const bytes = new Uint8Array(100).fill(9);
    origin.files.set('https://o.test/m.json', new TextEncoder().encode(JSON.stringify({ 'video.mp4': { '1000-1099': sha256(bytes) } })));
    const verifier = new SegmentVerifier(undefined, 'https://o.test/m.json', origin, clock,
      async (data) => new Uint8Array(createHash('sha256').update(data).digest()), () => {});
    const ref = { streamKey: VOD, sequence: 1, url: 'https://o.test/video.mp4?token=1', byteRange: { start: 1000, end: 1100 }, startS: 0, durationS: 2 };
    const verdict = verifier.verify(ref, bytes);
    await clock.advance(1000);
    expect(await verdict).toBe('valid');
    const wrong = verifier.verify(ref, new Uint8Array(100));
    await clock.advance(1000);
    expect(await wrong).toBe('invalid');
  });
});
