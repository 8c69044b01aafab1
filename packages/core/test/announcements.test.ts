// What the engine tells its peers about its segments (`have`): each change once, and nothing for
// a request a peer turned down. Every `have` costs each neighbour's link a packet and an SCTP
// acknowledgement; on a home uplink the viewer's own requests wait behind that chatter.
import { describe, expect, it } from 'vitest';
import { ShoalEngine } from '../src/index.js';
import { PROTOCOL_VERSION, decode, encode, type PeerMessage } from '../src/wire/peer-protocol.js';
import { enginesDestroyedAfterEach, FakeOrigin, makeSegments, ManualSignaling, peerId, UNPACED } from './fakes.js';
import { VirtualClock, linkTransports } from '@shoal/sim/kit';

const VOD = 'https://origin.test/vod.m3u8|shoal1|bw=800000';
const engines = enginesDestroyedAfterEach();

/** An engine at the start of a VOD, with two hand-driven peers: a holder of segment 3, and a watcher that holds nothing. */
function world(answer: (sequence: number, send: (message: PeerMessage) => void, bytes: Uint8Array) => void) {
  const clock = new VirtualClock();
  const origin = new FakeOrigin(clock);
  const refs = makeSegments(origin, VOD, 10);
  const signaling = new ManualSignaling(peerId(1));
  const engine = new ShoalEngine({ ...UNPACED }, { clock, http: origin, signaling });
  engines.push(engine);
  engine.registerStream({ streamKey: VOD, isLive: false, segments: refs });
  engine.setPlayback({ positionS: 0, rate: 1, bufferedUntilS: 0, isLive: false });
  const haves: string[] = [];
  /** The availability map each hand-driven peer got: its fetching segments. */
  const mapsFetching = new Map<number, number[]>();
  const peer = (n: number, states: (0 | 1)[], onRequest?: (sequence: number) => void) => {
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(n), { bytesPerS: 1e6, latencyMs: 5 });
    const send = (message: PeerMessage) => theirs.send(encode(message));
    theirs.setEvents({
      message: (data) => {
        const decoded = decode(data);
        if (!decoded.ok) return;
        const message = decoded.message;
        if (message.type === 'have' && n === 3) haves.push(`${message.sequence}:${['none', 'has', 'fetching'][message.state]}`);
        if (message.type === 'progress' && n === 3) haves.push(`${message.sequence}:progress ${message.heldBytes}/${message.totalBytes}`);
        if (message.type === 'availability') {
          mapsFetching.set(n, message.states.flatMap((state, i) => (state === 2 ? [message.firstSequence + i] : [])));
        }
        if (message.type === 'request') onRequest?.(message.sequence);
      },
      close: () => {},
      drain: () => {},
    });
    signaling.events!.peer(mine);
    send({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true });
    send({ type: 'availability', firstSequence: 0, states });
    return send;
  };
  const holder = peer(2, [0, 0, 0, 1], (sequence) => answer(sequence, holder, origin.files.get(refs[sequence]!.url)!));
  peer(3, []);
  return { clock, refs, engine, haves, peer, mapsFetching };
}

describe('announcements', () => {
  it('say an origin fetch once (fetching, then has), and nothing of a request a peer answered busy', async () => {
    const w = world((sequence, send) => send({ type: 'busy', sequence, waitMs: 3000 }));
    await w.clock.advance(50);
    const load = w.engine.loadSegment(w.refs[0]!);
    const later = w.engine.loadSegment(w.refs[3]!); // needed in 6 s: asked of the holder first, which is busy
    await w.clock.advance(8000);
    expect((await load.result).source).toBe('http');
    expect((await later.result).source).toBe('http');
    // Before: each try of the holder said `fetching` and then `none` to every other peer.
    expect(w.haves.filter((have) => have.startsWith('3:'))).toEqual(['3:fetching', '3:has']);
    expect(w.haves.filter((have) => have.startsWith('0:'))).toEqual(['0:fetching', '0:has']);
  });

  it('say a segment arriving from a peer as `progress` once its first bytes are in (it is relayed from then on) and again at half, then has', async () => {
    const w = world((sequence, send, bytes) => {
      send({ type: 'data', sequence, offset: 0, totalBytes: bytes.length, payload: bytes.subarray(0, 16_384) });
      // The rest a second later: the watcher hears of the relay in between.
      w.clock.setTimeout(() => {
        for (let offset = 16_384; offset < bytes.length; offset += 16_384) {
          send({ type: 'data', sequence, offset, totalBytes: bytes.length, payload: bytes.subarray(offset, offset + 16_384) });
        }
        send({ type: 'done', sequence, totalBytes: bytes.length });
      }, 1000);
    });
    await w.clock.advance(50);
    const load = w.engine.loadSegment(w.refs[3]!);
    await w.clock.advance(500);
    expect(w.haves).toEqual(['3:progress 16384/200000']);
    await w.clock.advance(3000);
    expect((await load.result).source).toBe('p2p');
    expect(w.haves).toEqual(['3:progress 16384/200000', '3:progress 114688/200000', '3:has']);
  });

  it('give a newcomer the map the others were told: an origin fetch is in it, an unanswered request to a peer is not', async () => {
    const w = world(() => {}); // the holder never answers
    await w.clock.advance(50);
    for (const ref of [w.refs[3]!, w.refs[0]!]) w.engine.loadSegment(ref).result.catch(() => {}); // 3 asked of the holder, 0 from the origin
    await w.clock.advance(10);
    w.peer(4, []);
    await w.clock.advance(20);
    // Before, it heard "fetching" of both, and might have waited for segment 3 from us.
    expect(w.mapsFetching.get(4)).toEqual([0]);
  });
});
