// The upload governor's account of where the uplink's time went (stats only): idle while nobody
// asks, held by the pace while it paces, yielding while the viewer's playback needs the uplink,
// waiting while a relayed segment's next bytes have not arrived; and uploads cancelled after some
// of their bytes went out.
import { describe, expect, it } from 'vitest';
import { UploadGovernor, type UploadSource } from '../src/upload/upload-governor.js';
import { VirtualClock } from '@shoal/sim/kit';

/** A source with `bytes` to send, `ready` of them readable now (a relay waits for the rest). */
class Source implements UploadSource {
  bufferedAmount = 0;
  constructor(public backlogBytes: number, public ready = backlogBytes) {}
  get nextDeadlineMs(): number | undefined {
    return this.ready > 0 ? Infinity : undefined;
  }
  *queued(): Iterable<{ remainingBytes: number; deadlineMs: number }> {
    if (this.backlogBytes > 0) yield { remainingBytes: this.backlogBytes, deadlineMs: Infinity };
  }
  sendChunk(maxBytes: number): number {
    const bytes = Math.min(maxBytes, this.ready);
    this.ready -= bytes;
    this.backlogBytes -= bytes;
    return bytes;
  }
  uploading(): void {}
  burstEdge(): void {}
}

describe('uplink usage', () => {
  it('counts time idle, paced, relay-waiting and yielding, and the bytes sent while paced', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 10_000);
    await clock.advance(1000);
    // 1 s with nothing to send, then 20 kB from a 10 kB/s start (doubling while it holds uploads back, to 20 kB/s at most): 1-2 s held by the pace.
    const source = new Source(20_000);
    governor.add(source);
    governor.pump();
    await clock.advance(2500);
    expect(source.backlogBytes).toBe(0);
    // A relayed segment: 5 kB queued, none of it arrived yet, for 1 s.
    const relay = new Source(5000, 0);
    governor.add(relay);
    governor.pump();
    await clock.advance(1000);
    governor.setYielding(true);
    await clock.advance(500);
    const { ms, bytes } = governor.stats.uplink;
    expect(ms.idle).toBeGreaterThanOrEqual(1000);
    expect(ms.paced).toBeGreaterThanOrEqual(900);
    expect(ms.paced).toBeLessThanOrEqual(2500);
    expect(ms.relay).toBe(1000);
    expect(ms.yielding).toBe(500);
    expect(ms.idle + ms.paced + ms.relay + ms.yielding + ms.full).toBe(5000);
    expect(bytes.idle + bytes.paced + bytes.relay + bytes.yielding + bytes.full).toBe(20_000);
    expect(bytes.paced).toBeGreaterThan(15_000);
    governor.destroy();
  });

  it('counts uploads their requesters cancelled, with the bytes already sent of them', () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 10_000);
    governor.usage.cancelled(12_000);
    governor.usage.cancelled(0);
    expect(governor.stats.uplink).toMatchObject({ cancelledUploads: 2, cancelledBytes: 12_000 });
  });
});
