// A VOD swarm on the virtual clock for tests of transfers between peers (relaying, resuming): one
// origin serving 10 segments of 200 kB, engines whose peers the test links by hand, with every
// ban recorded, and the integrity check a SHA-256 manifest would make (bytes equal to the origin's).
import { ShoalEngine, type EngineOptionsInput } from '../src/index.js';
import { PROTOCOL_VERSION, decode, encode } from '../src/wire/peer-protocol.js';
import { VirtualClock, linkTransports, type LinkOptions } from '@shoal/sim/kit';
import type { PlaybackReport, SegmentRef } from '../src/types.js';
import { FakeOrigin, makeSegments, ManualSignaling, peerId, UNPACED } from './fakes.js';

export const VOD = 'https://origin.test/vod.m3u8|shoal1|bw=800000';
export const SEGMENT_BYTES = 200_000;
const atStart: PlaybackReport = { positionS: 0, rate: 1, bufferedUntilS: 30, isLive: false };

/** `engines`: where each engine made goes, to be destroyed after the test (enginesDestroyedAfterEach). */
export function vodSwarm(engines: ShoalEngine[]) {
  const clock = new VirtualClock();
  const origin = new FakeOrigin(clock);
  const refs = makeSegments(origin, VOD, 10, SEGMENT_BYTES);
  /** "<viewer> banned <peer's last hex digit>: <reason>", in order. */
  const banned: string[] = [];
  /** Sequences of the segments validateSegment checked, once per check. */
  const verified: number[] = [];
  const validateSegment = (ref: SegmentRef, bytes: Uint8Array) => {
    verified.push(ref.sequence);
    return Buffer.compare(bytes, origin.files.get(ref.url)!) === 0;
  };
  /** Engine `n` (peer id n), playing from the start; no integrity check unless `options` gives one. */
  const make = (n: number, options: EngineOptionsInput = {}) => {
    const signaling = new ManualSignaling(peerId(n));
    const engine = new ShoalEngine({ ...UNPACED, ...options }, { clock, http: origin, signaling });
    engines.push(engine);
    engine.on('peer-banned', (event) => banned.push(`${n} banned ${event.peerId.slice(-1)}: ${event.reason}`));
    engine.registerStream({ streamKey: VOD, isLive: false, segments: refs, bandwidthBitsPerS: 800_000 }); // as hls.js says BANDWIDTH
    engine.setPlayback(atStart);
    return { engine, signaling, n };
  };
  type Made = ReturnType<typeof make>;
  /** Connects two engines over a simulated data channel; returns a's end and b's. */
  const link = (a: Made, b: Made, options: LinkOptions) => {
    const ends = linkTransports(clock, peerId(a.n), peerId(b.n), options);
    a.signaling.events!.peer(ends[0]);
    b.signaling.events!.peer(ends[1]);
    return ends;
  };
  /**
   * A scripted peer `n`, linked to `to`, that says it has segment 5 and serves any range asked of
   * it with one byte near the range's end flipped; returns the offsets the ranges started at.
   */
  const corruptHolder = (to: Made, n: number, options: LinkOptions): number[] => {
    const [mine, hostile] = linkTransports(clock, peerId(to.n), peerId(n), options);
    const offsets: number[] = [];
    hostile.setEvents({
      message: (data) => {
        const message = decode(data);
        if (!message.ok || message.message.type !== 'request') return;
        const { sequence, start } = message.message;
        offsets.push(start);
        const bytes = origin.files.get(refs[sequence]!.url)!.slice();
        const end = Math.min(message.message.end, bytes.length);
        const flipped = Math.max(start, end - 10);
        bytes[flipped] = bytes[flipped]! ^ 0xff;
        for (let at = start; at < end; at += 16_384) {
          hostile.send(encode({ type: 'data', sequence, offset: at, totalBytes: bytes.length, payload: bytes.subarray(at, Math.min(at + 16_384, end)) }));
        }
        hostile.send(encode({ type: 'done', sequence, totalBytes: bytes.length }));
      },
      close: () => {},
      drain: () => {},
    });
    to.signaling.events!.peer(mine);
    hostile.send(encode({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true }));
    hostile.send(encode({ type: 'availability', firstSequence: 0, states: [0, 0, 0, 0, 0, 1] }));
    return offsets;
  };
  return { clock, origin, refs, banned, verified, validateSegment, make, link, corruptHolder };
}
