// Liars among the neighbours, speaking the wire protocol by hand: what their claims cost the
// honest viewers. On the testing kit's virtual clock.
import { describe, expect, it } from 'vitest';
import { ShoalEngine } from '../src/index.js';
import { PROTOCOL_VERSION, SegmentState, decode, encode, type PeerMessage } from '../src/wire/peer-protocol.js';
import { VirtualClock, linkTransports, type SimChannelEnd } from '@shoal/sim/kit';
import { enginesDestroyedAfterEach, FakeOrigin, makeSegments, ManualSignaling, peerId, UNPACED } from './fakes.js';
import { liveSwarm, type LiveSwarm } from './live-swarm.js';

const LIVE = 'https://origin.test/live.m3u8|shoal1|bw=800000';
const engines = enginesDestroyedAfterEach();

/** 6 viewers of one live rendition (200 kB segments of 2 s), fast links, all linked to each other. */
async function swarm(): Promise<LiveSwarm> {
  const live = liveSwarm({
    viewers: 6,
    stream: { renditions: [{ streamKey: LIVE, bitrateBitsPerS: 800_000 }], segmentDurationS: 2, sizeJitter: 0, liveWindowSize: 10, segmentCount: 60 },
    origin: { latencyMs: 10, perConnectionBytesPerS: 2_000_000 },
    link: { upBytesPerS: 4_000_000, downBytesPerS: Infinity, latencyMs: 10 },
    player: { liveSyncDurationCount: 5, maxBufferLengthS: 30 },
  }, engines);
  await live.untilPlaying();
  for (let a = 0; a < live.viewers.length; a++) for (let b = a + 1; b < live.viewers.length; b++) live.link(live.viewers[a]!, live.viewers[b]!);
  return live;
}

/** A peer linked to every viewer that says it uploads; `onEdge` runs at each new live segment with its channels. */
function liar(live: LiveSwarm, onEdge: (sequence: number, say: (message: PeerMessage) => void) => void): SimChannelEnd[] {
  const channels = live.viewers.map((viewer) => {
    const [mine, theirs] = linkTransports(live.clock, viewer.host.id, peerId(99), { bytesPerS: 4_000_000, latencyMs: 10 });
    theirs.setEvents({ message: () => {}, close: () => {}, drain: () => {} });
    viewer.signaling.events!.peer(mine);
    theirs.send(encode({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true }));
    theirs.send(encode({ type: 'availability', firstSequence: 0, states: [] }));
    return theirs;
  });
  let edge = live.origin.edgeSequence();
  const watch = () => {
    for (; edge < live.origin.edgeSequence(); edge++) onEdge(edge + 1, (message) => channels.forEach((channel) => channel.send(encode(message))));
    live.clock.setTimeout(watch, 50);
  };
  watch();
  return channels;
}

/** Origin requests per segment over `segments` new live segments, and the players' stalls. */
async function measure(live: LiveSwarm, segments: number): Promise<{ fetches: number[]; stalls: number }> {
  const first = live.origin.edgeSequence() + 1;
  await live.clock.advance(segments * 2000);
  const last = live.origin.edgeSequence() - 3;
  await live.clock.advance(5000);
  const fetches: number[] = [];
  for (let sequence = first; sequence <= last; sequence++) fetches.push(live.origin.counters.requestsBySequence.get(sequence) ?? 0);
  for (const viewer of live.viewers) viewer.player.finish();
  return { fetches, stalls: live.viewers.reduce((sum, { player: { record } }) => sum + record.stalls.length + record.loadErrors, 0) };
}

describe('a lying neighbour in a live swarm', () => {
  it('that says `fetching` of every new segment and never has one holds the elected seeders back once at most: the swarm fetches each segment about once and plays on', async () => {
    const live = await swarm();
    await live.clock.advance(10_000);
    liar(live, (sequence, say) => say({ type: 'have', sequence, state: SegmentState.fetching }));
    const { fetches, stalls } = await measure(live, 20);
    console.log(`liar claiming fetching: origin fetches per segment [${fetches.join(' ')}], stalls ${stalls}`);
    // Without expiry each viewer waited for the liar until HTTP had to start: 6 fetches of each
    // segment. Now the segments claimed before its first claim lapsed (8 s: 4 segments) only.
    const after = fetches.slice(4);
    expect(after.length).toBeGreaterThanOrEqual(12);
    expect(after.reduce((sum, n) => sum + n, 0) / after.length).toBeLessThanOrEqual(1.2);
    expect(stalls).toBe(0);
  }, 30_000);
});

describe('a peer that advertises an enormous upload rate', () => {
  it('with a 1-byte queue, silent on what it is asked for, is believed only as fast as the initial rate, and backed off: the next load goes over HTTP at once', async () => {
    const VOD = 'https://origin.test/vod.m3u8|shoal1|bw=800000';
    const clock = new VirtualClock();
    const origin = new FakeOrigin(clock);
    const signaling = new ManualSignaling(peerId(1));
    const engine = new ShoalEngine({ ...UNPACED }, { clock, http: origin, signaling });
    engines.push(engine);
    const refs = makeSegments(origin, VOD, 10);
    engine.registerStream({ streamKey: VOD, isLive: false, segments: refs });
    engine.setPlayback({ positionS: 0, rate: 1, bufferedUntilS: 30, isLive: false });
    const asked: number[] = [];
    const [mine, liar] = linkTransports(clock, peerId(1), peerId(66), { bytesPerS: 1e6, latencyMs: 5 });
    liar.setEvents({ message: (data) => { const result = decode(data); if (result.ok && result.message.type === 'request') asked.push(result.message.sequence); }, close: () => {}, drain: () => {} });
    signaling.events!.peer(mine);
    liar.send(encode({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true }));
    liar.send(encode({ type: 'availability', firstSequence: 0, states: refs.map(() => SegmentState.has) }));
    // Its uplink "delivers 4 GB/s", and one byte is queued ahead of ours: not idle, so (before) never a stall.
    liar.send(encode({ type: 'ping', sentMs: 0, paceBytesPerS: 0xffff_fffe, backlogBytes: 1 }));
    await clock.advance(50);
    const httpOf = (sequence: number) => origin.requestsFor(refs[sequence]!.url);
    const first = engine.loadSegment(refs[3]!);
    while (httpOf(3).length === 0) await clock.advance(50);
    expect((await Promise.race([first.result, clock.advance(3000).then(() => first.result)])).source).toBe('http');
    const askedAtMs = clock.now();
    const second = engine.loadSegment(refs[4]!);
    await clock.advance(200);
    // Before: asked again, it held the second segment too until HTTP had to start (seconds on).
    expect(httpOf(4).map((request) => request.atMs - askedAtMs)).toEqual([0]);
    expect((await Promise.race([second.result, clock.advance(3000).then(() => second.result)])).source).toBe('http');
    console.log(`liar advertising 4 GB/s was asked for ${asked.join(' ')}`);
    expect(asked).not.toContain(4);
  });
});
