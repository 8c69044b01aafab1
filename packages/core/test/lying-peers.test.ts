// A live swarm with a liar among the neighbours, speaking the wire protocol by hand: what its
// claims cost the honest viewers. On the testing kit's virtual clock.
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, SegmentState, encode, type PeerMessage } from '../src/wire/peer-protocol.js';
import { linkTransports, type SimChannelEnd } from '@shoal/sim/kit';
import { enginesDestroyedAfterEach, peerId } from './fakes.js';
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
