// A segment from several peers, and a leg that loses its peer: when a sender leaves (or is too
// slow), the rest of its byte range comes from another peer that has the whole segment, from the
// byte reached, or over HTTP with a Range request when none can bring it in time. The whole is
// verified before the player gets it, and a bad copy from two senders gets only the peer whose
// bytes differ from the origin's banned.
import { describe, expect, it } from 'vitest';
import { decode } from '../src/wire/peer-protocol.js';
import { sendersOfBadBytes } from '../src/transfers/sender-blame.js';
import type { PeerSession } from '../src/peers/peer.js';
import type { LinkOptions, SimChannelEnd } from '@shoal/sim/kit';
import type { SegmentRef } from '../src/types.js';
import { enginesDestroyedAfterEach } from './fakes.js';
import { SEGMENT_BYTES, vodSwarm } from './vod-swarm.js';

const engines = enginesDestroyedAfterEach();

/** Every engine checks integrity; `link` records where the ranges its first engine asks for start. */
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
    if (message.ok && message.message.type === 'request') offsets.push(message.message.start);
    send(data);
  };
}

describe('resuming a transfer at another peer', () => {
  it('takes a segment from two peers at once: verified once, played', async () => {
    const w = world();
    const segment = w.refs[5]!; // needed 10 s in
    const fast = await w.holder(1, segment);
    const slow = await w.holder(2, segment);
    const originRequests = w.origin.requestsFor(segment.url).length;
    const viewer = w.make(3);
    const toFast: number[] = [];
    const toSlow: number[] = [];
    w.link(viewer, fast, { bytesPerS: 40_000, latencyMs: 20 }, toFast);
    w.link(viewer, slow, { bytesPerS: 20_000, latencyMs: 20 }, toSlow);
    await w.clock.advance(1000); // pings: each link's rate is known
    const load = viewer.engine.loadSegment(segment);
    await w.clock.advance(9000);
    const result = await load.result;
    expect(result.source).toBe('p2p');
    expect(Buffer.compare(result.bytes, w.origin.files.get(segment.url)!)).toBe(0);
    // One range from each (their uploads unmeasured, at the rate assumed for both: halves).
    expect([toFast.length, toSlow.length]).toEqual([1, 1]);
    const [fastBytes, slowBytes] = [fast.engine.getStats().uploadBytes, slow.engine.getStats().uploadBytes];
    expect(fastBytes + slowBytes).toBe(SEGMENT_BYTES);
    expect(Math.min(fastBytes, slowBytes)).toBeGreaterThan(SEGMENT_BYTES / 4);
    expect(w.origin.requestsFor(segment.url)).toHaveLength(originRequests);
    expect(w.verified.filter((sequence) => sequence === 5)).toHaveLength(1);
    expect(w.banned).toEqual([]);
  });

  it('moves the rest of a leg whose peer left to the other sender once it is free: no origin bytes, verified, played', async () => {
    const w = world();
    const segment = w.refs[5]!; // needed 10 s in
    const first = await w.holder(1, segment);
    const second = await w.holder(2, segment);
    const originRequests = w.origin.requestsFor(segment.url).length;
    const viewer = w.make(3);
    const toFirst: number[] = [];
    const toSecond: number[] = [];
    w.link(viewer, first, { bytesPerS: 40_000, latencyMs: 20 }, toFirst);
    w.link(viewer, second, { bytesPerS: 40_000, latencyMs: 20 }, toSecond);
    await w.clock.advance(1000);
    const load = viewer.engine.loadSegment(segment);
    await w.clock.advance(1000);
    expect([toFirst.length, toSecond.length]).toEqual([1, 1]);
    first.engine.destroy(); // leaves part-way through its range
    await w.clock.advance(8000);
    const result = await load.result;
    expect(result.source).toBe('p2p');
    expect(Buffer.compare(result.bytes, w.origin.files.get(segment.url)!)).toBe(0);
    // The second peer brought its own range, then the rest of the first's from the byte reached.
    expect(toSecond).toHaveLength(2);
    expect(toSecond[1]).toBeGreaterThan(toFirst[0]!);
    expect(toSecond[1]).toBeLessThan(Math.max(toFirst[0]!, toSecond[0]!));
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
    // Peer 2 says it has segment 5, and serves any range of it with one byte flipped.
    const hostileOffsets = w.corruptHolder(viewer, 2, { bytesPerS: 100_000, latencyMs: 20 });
    await w.clock.advance(200);
    const load = viewer.engine.loadSegment(segment);
    await w.clock.advance(7000);
    const result = await load.result;
    expect(hostileOffsets).toHaveLength(1);
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
    const senders = [{ peer: a, start: 0, end: 40 }, { peer: b, start: 40, end: 70 }, { peer: c, start: 70, end: 100 }];
    expect(sendersOfBadBytes({ bytes: badFirst, senders }, origin)).toEqual([a]);
    const badLast = origin.slice();
    badLast[99] = 0;
    expect(sendersOfBadBytes({ bytes: badLast, senders }, origin)).toEqual([c]);
    // Bytes no sender's range covers came over HTTP (a Range request): no peer's.
    expect(sendersOfBadBytes({ bytes: badLast, senders: senders.map((sender) => ({ ...sender, end: Math.min(sender.end, 90) })) }, origin)).toEqual([]);
    // A peer that sent two ranges is blamed for a bad byte in either.
    expect(sendersOfBadBytes({ bytes: badLast, senders: [{ peer: a, start: 0, end: 50 }, { peer: b, start: 50, end: 80 }, { peer: a, start: 80, end: 100 }] }, origin)).toEqual([a]);
  });
});
