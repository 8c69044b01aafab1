// PeerSession on its own, over a fake link on the virtual clock.
import { describe, expect, it } from 'vitest';
import { PeerSession, type PeerSessionHooks } from '../src/peers/peer.js';
import { UploadGovernor } from '../src/upload/upload-governor.js';
import { UNPACED, peerId } from './fakes.js';
import { VirtualClock, linkTransports } from '@shoal/sim/kit';

function hooks(segment: Uint8Array | undefined, events: string[] = [], segments: Uint8Array[] = []): PeerSessionHooks {
  return {
    onReady: () => {}, onAvailability: () => {}, onProgress: () => {},
    onSegment: (_peer, _sequence, bytes) => segments.push(bytes),
    onRefused: (_peer, sequence, reason) => events.push(`refused ${sequence}: ${reason}`),
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
    downloader.request(7);
    await clock.advance(2000);
    const { prefix } = downloader.cancelDownload();
    expect(prefix.length).toBeGreaterThan(0);
    expect(prefix.length).toBeLessThan(200_000);
    // About 20 KB/s observed, blended with the assumed 500 KB/s: far below the assumption.
    expect(downloader.throughputBytesPerS).toBeLessThan(300_000);
    downloader.close();
    uploader.close();
  });

  /** A downloader and an uploader of `segment` (as sequence 7) over a 100 kB/s link. */
  async function pair(segment: Uint8Array) {
    const clock = new VirtualClock();
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 100_000, latencyMs: 10 });
    const governor = () => new UploadGovernor(clock, 0, UNPACED.initialUploadPaceBytesPerS);
    const events: string[] = [];
    const segments: Uint8Array[] = [];
    const downloader = new PeerSession(mine, clock, hooks(undefined, events, segments), governor(), 500_000);
    const uploader = new PeerSession(theirs, clock, hooks(segment, []), governor(), 500_000);
    downloader.start(false, 0, []);
    uploader.start(true, 7, [1]);
    await clock.advance(100);
    return { clock, downloader, uploader, events, segments };
  }

  it('resumes at the offset another peer reached, and rates the peer by its own bytes only', async () => {
    const segment = Uint8Array.from({ length: 200_000 }, (_, i) => i % 251);
    const { clock, downloader, uploader, segments, events } = await pair(segment);
    const prefix = segment.slice(0, 150_000); // what another peer sent
    downloader.request(7, { prefix, totalBytes: 200_000 });
    expect(downloader.downloadProgress).toMatchObject({ startBytes: 150_000, receivedBytes: 150_000, totalBytes: 200_000 });
    await clock.advance(1000);
    expect(events).toEqual([]);
    expect(segments).toHaveLength(1);
    expect(Buffer.compare(segments[0]!, segment)).toBe(0);
    // 50 kB in about half a second: ~100 kB/s blended with the assumed 500 kB/s, not 200 kB counted as this peer's.
    expect(downloader.throughputBytesPerS).toBeLessThan(400_000);
    downloader.close();
    uploader.close();
  });

  it('gives up a resume whose size differs from the first peer\'s without calling it a violation', async () => {
    const { clock, downloader, uploader, events } = await pair(new Uint8Array(180_000));
    downloader.request(7, { prefix: new Uint8Array(150_000), totalBytes: 200_000 });
    await clock.advance(1000);
    // Either peer may be the one that is wrong: neither is banned, the bytes are dropped.
    expect(events).toEqual(['refused 7: size']);
    expect(downloader.downloading).toBeUndefined();
    downloader.close();
    uploader.close();
  });
});
