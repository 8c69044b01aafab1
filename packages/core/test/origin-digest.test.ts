// Peers' bytes checked against the digest the origin sends (RFC 9530 Repr-Digest), with no
// manifest and no validator; and requireVerifiedP2P, which asks peers for nothing while nothing can
// check their bytes. On the virtual clock, against a peer speaking the wire protocol by hand.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ShoalEngine, type EngineOptionsInput } from '../src/index.js';
import type { PlaybackReport } from '../src/types.js';
import { PROTOCOL_VERSION, decode, encode } from '../src/wire/peer-protocol.js';
import { enginesDestroyedAfterEach, FakeOrigin, makeSegments, ManualSignaling, peerId, UNPACED } from './fakes.js';
import { VirtualClock, linkTransports } from '@shoal/sim/kit';

const VOD = 'https://origin.test/vod.m3u8|shoal1|bw=800000';
const vodAt = (positionS: number): PlaybackReport => ({ positionS, rate: 1, bufferedUntilS: positionS + 30, isLive: false });
const engines = enginesDestroyedAfterEach();
const reprDigest = (bytes: Uint8Array) => `sha-512=:AAAA:, sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;

/**
 * The player loads segment 0 (over HTTP: no peer yet), then a peer that has segment 4 joins and
 * serves it, its bytes corrupted or not; the player then asks for segment 4.
 */
async function deliver(options: EngineOptionsInput, corrupt: boolean, digests: boolean, sendBytes = Infinity) {
  const clock = new VirtualClock();
  const origin = new FakeOrigin(clock);
  const signaling = new ManualSignaling(peerId(1));
  const refs = makeSegments(origin, VOD, 10);
  if (digests) for (const ref of refs) origin.headers.set(ref.url, { 'repr-digest': reprDigest(origin.files.get(ref.url)!) });
  const nodeSha256 = async (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest());
  const engine = new ShoalEngine({ ...UNPACED, ...options }, { clock, http: origin, signaling, sha256: nodeSha256 });
  engines.push(engine);
  const p2pEvents: string[] = [];
  engine.on('p2p', (event) => p2pEvents.push(`${event.state} ${event.verification}`));
  engine.registerStream({ streamKey: VOD, isLive: false, segments: refs });
  engine.setPlayback(vodAt(0));
  const first = engine.loadSegment(refs[0]!);
  await clock.advance(1000);
  expect((await first.result).source).toBe('http');
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
      const end = Math.min(bytes.length, sendBytes);
      for (let offset = 0; offset < end; offset += 16_384) {
        theirs.send(encode({ type: 'data', sequence, offset, totalBytes: bytes.length, payload: bytes.subarray(offset, Math.min(end, offset + 16_384)) }));
      }
      // A peer that stops half-way goes silent: the rest must come with a Range request.
      if (end === bytes.length) theirs.send(encode({ type: 'done', sequence, totalBytes: bytes.length }));
    },
    close: () => {},
    drain: () => {},
  });
  signaling.events!.peer(mine);
  theirs.send(encode({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true }));
  theirs.send(encode({ type: 'availability', firstSequence: 0, states: [0, 0, 0, 0, 1] }));
  await clock.advance(50);
  const load = engine.loadSegment(refs[4]!);
  await clock.advance(7000);
  const result = await load.result;
  const ranges = origin.requests.filter((request) => request.url === refs[4]!.url && request.range).map((request) => request.range);
  const heads = origin.requests.filter((request) => request.head).map((request) => request.url);
  return { result, banned, peerRequests, heads, ranges, refs, origin, stats: engine.getStats(), p2pEvents };
}

describe('the origin’s Repr-Digest', () => {
  it('verifies peers’ bytes without a manifest: a peer that sends wrong bytes is banned and the player gets the origin’s', async () => {
    const { result, banned, stats, origin, refs } = await deliver({}, true, true);
    expect(Buffer.from(result.bytes).equals(Buffer.from(origin.files.get(refs[4]!.url)!))).toBe(true);
    expect(result.source).toBe('http');
    expect(banned).toEqual(['segment 4 failed verification']);
    expect(stats.p2pVerification).toBe('digest');
  });

  it('hands verified peer bytes over, at the cost of one HEAD for the segment’s digest', async () => {
    const { result, banned, heads, refs, stats, p2pEvents } = await deliver({}, false, true);
    expect(result.source).toBe('p2p');
    expect(banned).toEqual([]);
    expect(heads).toEqual([refs[4]!.url]);
    expect(stats.p2pVerification).toBe('digest');
    // The p2p event says so once the origin's first response showed a digest.
    expect(p2pEvents).toEqual(['on digest']);
  });

  it('checks a copy finished by a Range request after a peer’s part with the Range response’s Repr-Digest: a wrong part is caught, no HEAD needed', async () => {
    const { result, banned, heads, ranges, origin, refs } = await deliver({}, true, true, 98_304);
    expect(ranges.length).toBeGreaterThan(0); // the rest came as a Range request
    expect(Buffer.from(result.bytes).equals(Buffer.from(origin.files.get(refs[4]!.url)!))).toBe(true);
    expect(banned).toEqual(['segment 4 failed verification']);
    expect(heads).toEqual([]);
  });

  it('asks no HEAD of an origin that sends no digest, and says peers’ bytes are unverified', async () => {
    const { result, heads, stats } = await deliver({}, false, false);
    expect(result.source).toBe('p2p');
    expect(heads).toEqual([]);
    expect(stats.p2pVerification).toBe('none');
  });
});

describe('requireVerifiedP2P', () => {
  it('asks peers for nothing while nothing can verify their bytes, and says why', async () => {
    const { result, peerRequests, stats, p2pEvents } = await deliver({ requireVerifiedP2P: true }, true, false);
    expect(result.source).toBe('http');
    expect(peerRequests).toBe(0);
    expect(stats).toMatchObject({ p2p: 'unavailable', p2pVerification: 'none' });
    expect(stats.p2pReason).toMatch(/^requireVerifiedP2P/);
    expect(p2pEvents[0]).toBe('unavailable none');
  });

  it('downloads from peers, verified, once the origin shows it sends digests', async () => {
    const { result, stats, p2pEvents } = await deliver({ requireVerifiedP2P: true }, false, true);
    expect(result.source).toBe('p2p');
    expect(stats).toMatchObject({ p2p: 'on', p2pVerification: 'digest' });
    expect(p2pEvents).toEqual(['unavailable none', 'on digest']);
  });
});
