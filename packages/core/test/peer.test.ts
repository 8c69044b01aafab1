// PeerSession on its own, over a fake link on the virtual clock.
import { describe, expect, it } from 'vitest';
import { PeerSession, type PeerSessionHooks } from '../src/peer.js';
import { UploadGovernor } from '../src/upload-governor.js';
import { UNPACED, peerId } from './fakes.js';
import { VirtualClock, linkTransports } from '../src/testing.js';

function hooks(segment: Uint8Array | undefined): PeerSessionHooks {
  return {
    onReady: () => {}, onAvailability: () => {}, onProgress: () => {}, onSegment: () => {}, onRefused: () => {},
    segmentSize: () => segment?.length,
    readableBytes: () => segment?.length,
    readSegment: (_sequence, start, end) => segment?.slice(start, end),
    uploadEnabled: () => segment !== undefined,
    onBytesUp: () => {}, onViolation: () => {}, onClose: () => {},
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
});
