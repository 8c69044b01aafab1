// Resuming a P2P transfer: when its peer leaves (or is too slow), the rest comes from another peer
// that has the whole segment, from the byte offset reached, or over HTTP with a Range request when
// none can bring it in time. The whole is verified before the player gets it, and a bad copy from
// two senders gets only the peer whose bytes differ from the origin's banned.
import { describe, expect, it } from 'vitest';
import { decode } from '../src/wire/peer-protocol.js';
import { plan, type SchedulerInput, type SegmentPlan } from '../src/plan/scheduler.js';
import { sendersOfBadBytes } from '../src/transfers/sender-blame.js';
import type { PeerSession } from '../src/peers/peer.js';
import type { LinkOptions, SimChannelEnd } from '@shoal/sim/kit';
import type { SegmentRef } from '../src/types.js';
import { enginesDestroyedAfterEach } from './fakes.js';
import { SEGMENT_BYTES, vodSwarm } from './vod-swarm.js';

const engines = enginesDestroyedAfterEach();

/** Every engine checks integrity; `link` records the offsets of the requests its first engine sends. */
function world() {
  const swarm = vodSwarm(engines);
  const make = (n: number) => swarm.make(n, { validateSegment: swarm.validateSegment });
  type Made = ReturnType<typeof make>;
  const link = (a: Made, b: Made, options: LinkOptions, requestOffsets: number[] = []) => recordRequests(swarm.link(a, b, options)[0], requestOffsets);
  /** An engine that fetched `ref` from the origin and holds it. */
  const holder = async (n: number, ref: SegmentRef) => {
    const made = make(n);
    const load = made.engine.loadSegment(ref);
    await swarm.clock.advance(500);
    expect((await load.result).source).toBe('http');
    return made;
  };
  return { ...swarm, make, link, holder };
}

function recordRequests(end: SimChannelEnd, offsets: number[]): void {
  const send = end.send.bind(end);
  end.send = (data: Uint8Array) => {
    const message = decode(data);
    if (message.ok && message.message.type === 'request') offsets.push(message.message.offset);
    send(data);
  };
}

describe('resuming a transfer at another peer', () => {
  it('resumes at offset from a second peer when the first leaves: no origin bytes, verified, played', async () => {
    const w = world();
    const segment = w.refs[5]!; // needed 10 s in
    const first = await w.holder(1, segment);
    const second = await w.holder(2, segment);
    const originRequests = w.origin.requestsFor(segment.url).length;
    const viewer = w.make(3);
    const toFirst: number[] = [];
    const toSecond: number[] = [];
    w.link(viewer, first, { bytesPerS: 100_000, latencyMs: 20 }, toFirst);
    w.link(viewer, second, { bytesPerS: 50_000, latencyMs: 20 }, toSecond);
    await w.clock.advance(200);
    const load = viewer.engine.loadSegment(segment);
    await w.clock.advance(1000);
    expect(toFirst).toEqual([0]);
    expect(toSecond).toEqual([]);
    first.engine.destroy(); // leaves part-way: about half the segment arrived
    await w.clock.advance(4000);
    const result = await load.result;
    expect(result.source).toBe('p2p');
    expect(Buffer.compare(result.bytes, w.origin.files.get(segment.url)!)).toBe(0);
    expect(toSecond).toHaveLength(1);
    expect(toSecond[0]).toBeGreaterThan(50_000);
    // The second peer sent exactly the rest, and the origin nothing more of the segment.
    expect(second.engine.getStats().uploadBytes).toBe(SEGMENT_BYTES - toSecond[0]!);
    expect(w.origin.requestsFor(segment.url)).toHaveLength(originRequests);
    expect(viewer.engine.getStats().httpBytes).toBe(0);
    expect(w.verified.filter((sequence) => sequence === 5)).toHaveLength(1);
    expect(w.banned).toEqual([]);
  });

  it('fetches the rest with an HTTP Range request when no other peer has the segment', async () => {
    const w = world();
    const segment = w.refs[5]!;
    const first = await w.holder(1, segment);
    const relay = w.make(2); // connected, but without the segment
    const viewer = w.make(3);
    const toFirst: number[] = [];
    w.link(viewer, first, { bytesPerS: 100_000, latencyMs: 20 }, toFirst);
    w.link(viewer, relay, { bytesPerS: 100_000, latencyMs: 20 });
    await w.clock.advance(200);
    const load = viewer.engine.loadSegment(segment);
    await w.clock.advance(1000);
    first.engine.destroy();
    await w.clock.advance(3000);
    const result = await load.result;
    expect(Buffer.compare(result.bytes, w.origin.files.get(segment.url)!)).toBe(0);
    const p2pBytes = viewer.engine.getStats().p2pBytes;
    expect(p2pBytes).toBeGreaterThan(50_000);
    expect(w.origin.requestsFor(segment.url).at(-1)!.range).toEqual({ start: p2pBytes, end: SEGMENT_BYTES });
    expect(viewer.engine.getStats().httpBytes).toBe(SEGMENT_BYTES - p2pBytes);
    expect(viewer.engine.getStats().originBytes).toEqual({ seed: 0, urgent: 0, range: SEGMENT_BYTES - p2pBytes, refetch: 0 });
    // The holder fetched its copy for its player; the one it uploaded from went away after some bytes.
    expect(first.engine.getStats().originBytes).toEqual({ seed: 0, urgent: SEGMENT_BYTES, range: 0, refetch: 0 });
    expect(relay.engine.getStats().uploadBytes).toBe(0);
  });

  it('bans only the peer whose bytes differ from the origin\'s when a copy from two peers fails verification', async () => {
    const w = world();
    const segment = w.refs[5]!;
    const honest = await w.holder(1, segment);
    const viewer = w.make(3);
    w.link(viewer, honest, { bytesPerS: 100_000, latencyMs: 20 });
    // Peer 2 says it has segment 5, and serves it from any offset with one byte near the end flipped.
    const hostileOffsets = w.corruptHolder(viewer, 2, { bytesPerS: 100_000, latencyMs: 20 });
    await w.clock.advance(200);
    const load = viewer.engine.loadSegment(segment);
    await w.clock.advance(1000);
    expect(hostileOffsets).toEqual([]);
    honest.engine.destroy();
    await w.clock.advance(6000);
    const result = await load.result;
    expect(hostileOffsets).toHaveLength(1);
    expect(hostileOffsets[0]).toBeGreaterThan(50_000);
    // The mixed copy failed; the player got the origin's, and only the hostile peer was banned.
    expect(Buffer.compare(result.bytes, w.origin.files.get(segment.url)!)).toBe(0);
    expect(result.source).toBe('http');
    expect(w.banned).toEqual(['3 banned 2: segment 5 failed verification']);
  });
});

describe('blame for a copy from several peers', () => {
  const peer = (id: string) => ({ id }) as PeerSession;
  const origin = Uint8Array.from({ length: 100 }, (_, i) => i);

  it('names the sender whose byte range differs from the origin\'s copy, whichever range it is', () => {
    const [a, b, c] = [peer('a'), peer('b'), peer('c')];
    const badFirst = origin.slice();
    badFirst[3] = 0xff;
    const senders = [{ peer: a, fromByte: 0 }, { peer: b, fromByte: 40 }, { peer: c, fromByte: 70 }];
    expect(sendersOfBadBytes({ bytes: badFirst, senders, endByte: 100 }, origin)).toEqual([a]);
    const badLast = origin.slice();
    badLast[99] = 0;
    expect(sendersOfBadBytes({ bytes: badLast, senders, endByte: 100 }, origin)).toEqual([c]);
    // Bytes after `endByte` came over HTTP (a Range request): no peer's.
    expect(sendersOfBadBytes({ bytes: badLast, senders, endByte: 90 }, origin)).toEqual([]);
  });
});

describe('the plan resumes a transfer whose peer left', () => {
  const windows = { mode: 'normal', httpSafetyFactor: 1.5, httpSafetyMarginMs: 500, prefetchAheadS: 15, waitForPeers: true, p2pMustLeaveHttpFallback: false } as const;
  const orphan: SegmentPlan = {
    sequence: 5, sizeBytes: 200_000, deadlineMs: 5000, requested: true, httpInFlight: false,
    p2p: { peerId: 'gone', peerGone: true, receivedBytes: 120_000, totalBytes: 200_000, startedMs: 0 },
    seedAtMs: undefined, comingFromPeer: false, seedSatisfied: false, wastedP2PTransfers: 0, resumableAt: new Set(['b']),
  };
  const input = (peerBytesPerS: number, segment = orphan): SchedulerInput => ({
    nowMs: 0, isLive: false, segments: [segment], httpThroughputBytesPerS: 1_000_000, windows, p2pDownload: true, maxP2PDownloads: 2,
    peers: [
      { id: 'b', offers: new Set([5]), throughputBytesPerS: peerBytesPerS, busy: false },
      { id: 'c', offers: new Set([5]), throughputBytesPerS: 10_000_000, busy: false },
    ],
  });

  it('asks a holder that can bring the rest in time, else fetches it over HTTP', () => {
    // 80 kB left: at 100 kB/s in 0.8 s, with time for HTTP after it.
    expect(plan(input(100_000)).filter((action) => action.type !== 'wake')).toEqual([{ type: 'cancel-p2p', sequence: 5, resumeOverHttp: false, resumeAtPeer: 'b' }]);
    // At 10 kB/s it would take 8 s: past the deadline. The faster c is not among the resumable (e.g. it only relays).
    expect(plan(input(10_000)).filter((action) => action.type !== 'wake')).toEqual([{ type: 'cancel-p2p', sequence: 5, resumeOverHttp: true }]);
  });

  it('moves a transfer too slow for its deadline to a faster holder while HTTP would still be in time after it', () => {
    // 120 kB in 2 s: the 80 kB left would take 1.3 s, 1.2 s are left, HTTP needs 0.62 s for them.
    const slow: SegmentPlan = { ...orphan, deadlineMs: 1200, p2p: { peerId: 'a', receivedBytes: 120_000, totalBytes: 200_000, startedMs: -2000 } };
    const actions = (peerBytesPerS: number, segment: SegmentPlan) => plan(input(peerBytesPerS, segment)).filter((action) => action.type !== 'wake');
    expect(actions(2_000_000, slow)).toEqual([{ type: 'cancel-p2p', sequence: 5, resumeOverHttp: false, resumeAtPeer: 'b' }]);
    // At 100 kB/s, b would leave no time for HTTP after it: wait, then (HTTP must start) over HTTP.
    expect(actions(100_000, slow)).toEqual([]);
    expect(actions(100_000, { ...slow, deadlineMs: 600 })).toEqual([{ type: 'cancel-p2p', sequence: 5, resumeOverHttp: true }]);
  });

  it('drops the bytes when the player no longer waits for them', () => {
    const unwanted = { ...orphan, requested: false };
    expect(plan(input(100_000, unwanted)).filter((action) => action.type !== 'wake')).toEqual([{ type: 'cancel-p2p', sequence: 5, resumeOverHttp: false }]);
  });
});
