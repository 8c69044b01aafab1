// Relaying while receiving: a peer serves a segment it is still receiving from another peer as its
// bytes arrive, so a chain of hops costs about one transfer time, not one per hop; its last byte
// waits until the relay verified the whole, so bad bytes from upstream cost downstream peers a
// refetch but never get the honest relay banned.
import { describe, expect, it } from 'vitest';
import { enginesDestroyedAfterEach } from './fakes.js';
import { SEGMENT_BYTES, VOD, vodSwarm } from './vod-swarm.js';

/** Each link carries 50 kB/s: one hop of a segment takes 4 s. */
const LINK = { bytesPerS: 50_000, latencyMs: 20 };

const engines = enginesDestroyedAfterEach();

function world() {
  const swarm = vodSwarm(engines);
  return { ...swarm, link: (a: Made, b: Made) => swarm.link(a, b, LINK) };
}
type Made = ReturnType<ReturnType<typeof vodSwarm>['make']>;

describe('relaying while receiving', () => {
  it('passes a segment down a chain of three hops in about one hop\'s time, each copy verified', async () => {
    const w = world();
    const options = { validateSegment: w.validateSegment };
    const [a, b, c, d] = [1, 2, 3, 4].map((n) => w.make(n, options));
    const segment = w.refs[5]!; // needed 10 s in
    const first = a!.engine.loadSegment(segment);
    await w.clock.advance(500);
    expect((await first.result).source).toBe('http');
    // A line: a - b - c - d. Only a has the segment; c and d can reach it only through relays.
    w.link(a!, b!);
    w.link(b!, c!);
    w.link(c!, d!);
    await w.clock.advance(200);
    const startMs = w.clock.now();
    // Each asks half a second after its upstream neighbour, which has its first bytes by then (a
    // relay answers `absent` before; a VOD viewer with no holder in sight goes to the origin).
    const loads = [];
    for (const viewer of [b, c, d]) {
      loads.push(viewer!.engine.loadSegment(segment));
      await w.clock.advance(500);
    }
    await w.clock.advance(8000);
    const results = await Promise.all(loads.map((load) => load.result));
    // Store and forward would take 4 s per hop: d would have it 12 s in, after its deadline.
    expect(results.map((result) => result.source)).toEqual(['p2p', 'p2p', 'p2p']);
    expect(results[2]!.timing.doneMs - startMs).toBeLessThan(6000);
    expect(w.origin.requestsFor(segment.url)).toHaveLength(1);
    for (const result of results) expect(Buffer.compare(result.bytes, w.origin.files.get(segment.url)!)).toBe(0);
    expect(b!.engine.getStats().uploadBytes).toBe(SEGMENT_BYTES);
    expect(c!.engine.getStats().uploadBytes).toBe(SEGMENT_BYTES);
    expect(w.banned).toEqual([]);
  });

  it('bans the peer that sent bad bytes, not the relay that passed them on', async () => {
    const w = world();
    const options = { validateSegment: w.validateSegment };
    const relay = w.make(2, options);
    const downstream = w.make(3, options);
    // A hostile peer 1 serves a corrupted copy of segment 5 to the relay.
    w.corruptHolder(relay, 1, LINK);
    w.link(relay, downstream);
    await w.clock.advance(200);
    const segment = w.refs[5]!;
    const loads = [relay.engine.loadSegment(segment)];
    await w.clock.advance(500);
    loads.push(downstream.engine.loadSegment(segment));
    await w.clock.advance(9000);
    const results = await Promise.all(loads.map((load) => load.result));
    for (const result of results) expect(Buffer.compare(result.bytes, w.origin.files.get(segment.url)!)).toBe(0);
    // The downstream peer did get relayed bytes, then `absent` instead of the last one.
    expect(downstream.engine.getStats().streams[VOD]!.p2pBytes + downstream.engine.getStats().httpBytes).toBeGreaterThan(SEGMENT_BYTES);
    expect(w.banned).toEqual(['2 banned 1: segment 5 failed verification']);
  });
});
