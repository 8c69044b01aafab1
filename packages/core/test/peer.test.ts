// PeerSession on its own, over a fake link on the virtual clock.
import { describe, expect, it } from 'vitest';
import { PeerSession, type PeerSessionHooks } from '../src/peers/peer.js';
import type { PeerTransport } from '../src/types.js';
import { UploadGovernor } from '../src/upload/upload-governor.js';
import { CHUNK_BYTES, PACE_UNMEASURED, dataPayloadLimit, decode, encode } from '../src/wire/peer-protocol.js';
import { UNPACED, peerId } from './fakes.js';
import { askFor, askOneAfterAnother } from './legs.js';
import { VirtualClock, linkTransports } from '@shoal/sim/kit';

function hooks(segment: Uint8Array | undefined, events: string[] = []): PeerSessionHooks {
  return {
    onReady: () => {}, onAvailability: () => {},
    segmentSize: () => segment?.length,
    readableBytes: () => segment?.length,
    readSegment: (_sequence, start, end) => segment?.slice(start, end),
    uploadEnabled: () => segment !== undefined,
    onBytesUp: () => {}, onViolation: (_peer, reason) => events.push(`violation: ${reason}`), onClose: () => {},
  };
}

describe('peer session', () => {
  it('lowers its throughput estimate from a cancelled transfer, not only from finished ones', async () => {
    const clock = new VirtualClock();
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 20_000, latencyMs: 10 });
    const governor = () => new UploadGovernor(clock, 0, UNPACED.initialUploadPaceBytesPerS);
    const downloader = new PeerSession(mine, clock, hooks(undefined), governor(), 500_000);
    const uploader = new PeerSession(theirs, clock, hooks(new Uint8Array(200_000)), governor(), 500_000);
    downloader.start(false, 0, []);
    uploader.start(true, 7, [1]);
    await clock.advance(100);
    expect(downloader.mayRequest(7)).toBe(true);
    const asked = askFor(downloader, clock, 7);
    await clock.advance(2000);
    downloader.cancelLeg(asked.leg);
    expect(asked.arrived).toBeGreaterThan(0);
    expect(asked.arrived).toBeLessThan(200_000);
    // About 20 KB/s observed, blended with the assumed 500 KB/s: far below the assumption.
    expect(downloader.download.throughputBytesPerS).toBeLessThan(300_000);
    downloader.close();
    uploader.close();
  });

  /** A downloader and an uploader of `segment` (as sequence 7) over a 100 kB/s link. */
  async function pair(segment: Uint8Array) {
    const clock = new VirtualClock();
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 100_000, latencyMs: 10 });
    const governor = () => new UploadGovernor(clock, 0, UNPACED.initialUploadPaceBytesPerS);
    const events: string[] = [];
    const downloader = new PeerSession(mine, clock, hooks(undefined, events), governor(), 500_000);
    const uploader = new PeerSession(theirs, clock, hooks(segment, []), governor(), 500_000);
    downloader.start(false, 0, []);
    uploader.start(true, 7, [1]);
    await clock.advance(100);
    return { clock, downloader, uploader, events };
  }

  it('brings the byte range asked for, and rates the peer by that range only', async () => {
    const segment = Uint8Array.from({ length: 200_000 }, (_, i) => i % 251);
    const { clock, downloader, uploader, events } = await pair(segment);
    const asked = askFor(downloader, clock, 7, { start: 150_000 });
    await clock.advance(1000);
    expect(events).toEqual([]);
    expect(asked.finished).toBe(true);
    expect(asked.arrived).toBe(50_000);
    expect(Buffer.compare(asked.transfer.buffer!.subarray(150_000), segment.subarray(150_000))).toBe(0);
    // 50 kB in about half a second: ~100 kB/s blended with the assumed 500 kB/s, not 200 kB counted as this peer's.
    expect(downloader.download.throughputBytesPerS).toBeLessThan(400_000);
    expect(downloader.download.leg).toBeUndefined();
    downloader.close();
    uploader.close();
  });

  it('counts the bytes of every message but data as control bytes, and data as payload only', async () => {
    const clock = new VirtualClock();
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 100_000, latencyMs: 10 });
    const governor = () => new UploadGovernor(clock, 0, UNPACED.initialUploadPaceBytesPerS);
    const sent: Uint8Array[] = [];
    const send = theirs.send.bind(theirs);
    theirs.send = (bytes) => (sent.push(bytes.slice()), send(bytes));
    const counted = { control: 0, payload: 0 };
    const uploaderHooks = { ...hooks(new Uint8Array(60_000)), onBytesUp: (bytes: number) => (counted.payload += bytes), onControlBytesUp: (bytes: number) => (counted.control += bytes) };
    const downloader = new PeerSession(mine, clock, hooks(undefined), governor(), 500_000);
    const uploader = new PeerSession(theirs, clock, uploaderHooks, governor(), 500_000);
    downloader.start(false, 0, []);
    uploader.start(true, 7, [1]);
    await clock.advance(100);
    const asked = askFor(downloader, clock, 7);
    await clock.advance(2000);
    expect(asked.finished).toBe(true);
    const typeOf = (bytes: Uint8Array) => {
      const result = decode(bytes);
      return result.ok ? result.message.type : 'undecodable';
    };
    expect(sent.map(typeOf)).toEqual(expect.arrayContaining(['handshake', 'availability', 'ping', 'data', 'done']));
    expect(counted.control).toBe(sent.filter((bytes) => typeOf(bytes) !== 'data').reduce((sum, bytes) => sum + bytes.length, 0));
    expect(counted.control).toBeGreaterThan(0);
    expect(counted.payload).toBe(60_000);
    downloader.close();
    uploader.close();
  });

  it('brings a range in the middle of the segment and ends it with done', async () => {
    const segment = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7) % 253);
    const { clock, downloader, uploader, events } = await pair(segment);
    const asked = askFor(downloader, clock, 7, { start: 40_000, end: 90_000 });
    await clock.advance(1000);
    expect(events).toEqual([]);
    expect(asked).toMatchObject({ finished: true, arrived: 50_000, failed: undefined });
    expect(Buffer.compare(asked.transfer.buffer!.subarray(40_000, 90_000), segment.subarray(40_000, 90_000))).toBe(0);
    downloader.close();
    uploader.close();
  });

  it('sizes data messages to what the channel carries (RTCSctpTransport.maxMessageSize), within the protocol', async () => {
    const clock = new VirtualClock();
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 100_000, latencyMs: 10 });
    const sizes: number[] = [];
    // The uploader's channel carries at most 4 KiB per message; every message it sends is recorded.
    const small: PeerTransport = {
      remotePeerId: theirs.remotePeerId,
      get bufferedAmount() {
        return theirs.bufferedAmount;
      },
      maxMessageBytes: 4096,
      send: (data) => {
        if (data[0] === 0x05) sizes.push(data.length);
        theirs.send(data);
      },
      close: () => theirs.close(),
      setEvents: (events) => theirs.setEvents(events),
    };
    const governor = () => new UploadGovernor(clock, 0, 1_000_000);
    const downloader = new PeerSession(mine, clock, hooks(undefined), governor(), 500_000);
    const segment = Uint8Array.from({ length: 60_000 }, (_, i) => i % 249);
    const uploader = new PeerSession(small, clock, hooks(segment), governor(), 500_000);
    downloader.start(false, 0, []);
    uploader.start(true, 7, [1]);
    await clock.advance(100);
    const asked = askFor(downloader, clock, 7);
    await clock.advance(3000);
    expect(asked).toMatchObject({ finished: true, arrived: 60_000 });
    expect(Buffer.compare(asked.transfer.buffer!, segment)).toBe(0);
    expect(Math.max(...sizes)).toBe(4096);
    expect(dataPayloadLimit(undefined)).toBe(CHUNK_BYTES);
    expect(dataPayloadLimit(1_073_741_823)).toBe(CHUNK_BYTES); // Firefox's advertised size: the protocol's chunk stays the cap
    downloader.close();
    uploader.close();
  });

  it("gives up a leg whose size differs from another sender's without calling it a violation", async () => {
    const { clock, downloader, uploader, events } = await pair(new Uint8Array(180_000));
    const asked = askFor(downloader, clock, 7, { start: 150_000 });
    asked.transfer.setSize(200_000); // what another sender said
    await clock.advance(1000);
    // Either peer may be the one that is wrong: neither is banned, the leg ends.
    expect(events).toEqual([]);
    expect(asked.failed).toBe('size');
    expect(downloader.download.leg).toBeUndefined();
    downloader.close();
    uploader.close();
  });

  it('closes the channel to a peer of protocol version 2 without calling it a violation', async () => {
    const clock = new VirtualClock();
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 100_000, latencyMs: 10 });
    const events: string[] = [];
    let closedWith: string | undefined;
    const session = new PeerSession(mine, clock, { ...hooks(undefined, events), onClose: (_peer, reason) => (closedWith = reason) }, new UploadGovernor(clock, 0, 16_384), 500_000);
    theirs.setEvents({ message: () => {}, close: () => {}, drain: () => {} });
    session.start(false, 0, []);
    theirs.send(encode({ type: 'handshake', version: 2, uploads: true }));
    await clock.advance(100);
    expect(closedWith).toBe('protocol version 2 not supported');
    expect(events).toEqual([]);
  });

  it("counts every byte it receives in its pongs, and the uploader's advertised pace falls to what its link delivered", async () => {
    const clock = new VirtualClock();
    // A 20 kB/s link under an uploader that starts at 64 kB/s and has always more to send.
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 20_000, latencyMs: 10 });
    const uploaderGovernor = new UploadGovernor(clock, 0, 64_000);
    const downloader = new PeerSession(mine, clock, hooks(undefined), new UploadGovernor(clock, 0, 16_384), 500_000);
    const pongs: number[] = [];
    const tap = theirs.setEvents.bind(theirs);
    theirs.setEvents = (events) => tap({ ...events, message: (data) => {
      const decoded = decode(data);
      if (decoded.ok && decoded.message.type === 'pong') pongs.push(decoded.message.deliveredBytes);
      events.message(data);
    } });
    // As in a browser, the channel takes everything at once and the queue builds beyond it (a
    // router's): the channel's buffer never fills, only the receiver's count shows the link's rate.
    Object.defineProperty(theirs, 'bufferedAmount', { get: () => 0, set: () => {} });
    const uploader = new PeerSession(theirs, clock, hooks(new Uint8Array(400_000)), uploaderGovernor, 500_000);
    downloader.start(false, 0, []);
    uploader.start(true, 7, [1]);
    await clock.advance(100);
    expect(uploaderGovernor.advertised.paceBytesPerS).toBe(PACE_UNMEASURED);
    askOneAfterAnother(downloader, clock, 7);
    await clock.advance(6000);
    // The pongs count what arrived (the downloader's ledger), growing as the link delivers.
    expect(pongs.length).toBeGreaterThan(3);
    expect(pongs.at(-1)!).toBeGreaterThan(pongs[0]!);
    // Slow start is over, and peers are told no more than the link's 20 kB/s (governor tests: how).
    const advertised = uploaderGovernor.advertised.paceBytesPerS;
    expect(advertised).toBeLessThan(22_000);
    downloader.close();
    uploader.close();
  });
});
