// The uploader's side of the delivery-rate signal: receivers count every byte they got from us in
// their pongs; over a second in which uploads always had more to send, fewer delivered than the
// pace means the link, not the pace, is the limit. Peers are then told what got through.
import { describe, expect, it } from 'vitest';
import { PACE_UNMEASURED } from '../src/wire/peer-protocol.js';
import { UploadGovernor, type UploadSource } from '../src/upload/upload-governor.js';
import { VirtualClock } from '@shoal/sim/kit';

/** Always more to send; the channel takes it all at once (the queue builds beyond it, as in a router). */
class Endless implements UploadSource {
  bufferedAmount = 0;
  backlogBytes = 10_000_000;
  sent = 0;
  readonly nextDeadlineMs = Infinity;
  *queued(): Iterable<{ remainingBytes: number; deadlineMs: number }> {
    yield { remainingBytes: this.backlogBytes, deadlineMs: Infinity };
  }
  sendChunk(maxBytes: number): number {
    this.sent += maxBytes;
    return maxBytes;
  }
  uploading(): void {}
}

/**
 * A governor uploading to one peer over a link of `linkBytesPerS`, pinging it every 250 ms. The
 * channel is ordered: each ping arrives once the link has delivered every byte sent before it, and
 * its pong counts them (no queueing delay is read meanwhile: only the counts can tell).
 */
async function uploadOver(linkBytesPerS: number, startPace: number, seconds: number) {
  const clock = new VirtualClock();
  const governor = new UploadGovernor(clock, 0, startPace);
  const source = new Endless();
  governor.add(source);
  governor.pump();
  let arrivalMs = 0;
  for (let t = 0; t < seconds * 4; t++) {
    await clock.advance(250);
    const sentMs = clock.now();
    governor.pingSent('peer', sentMs);
    arrivalMs = Math.max(arrivalMs, sentMs, (source.sent / linkBytesPerS) * 1000);
    governor.delivered('peer', sentMs, Math.round(arrivalMs), source.sent >>> 0);
    governor.delaySample('peer', 20, 40);
  }
  return { governor, source };
}

describe('the delivery-rate signal', () => {
  it('ends slow start within a second or two of the pace passing what the link delivers, and advertises what got through', async () => {
    // Slow start doubles 16 kB/s every second; the link carries 40 kB/s.
    const { governor } = await uploadOver(40_000, 16_000, 4);
    const advertised = governor.advertised.paceBytesPerS;
    expect(advertised).not.toBe(PACE_UNMEASURED);
    expect(advertised).toBeGreaterThan(34_000);
    expect(advertised).toBeLessThanOrEqual(41_000);
    expect(governor.stats.paceBytesPerS).toBeLessThan(50_000);
  });

  it('keeps slow start while the link delivers all the pace sends', async () => {
    const { governor } = await uploadOver(10_000_000, 16_000, 3);
    expect(governor.advertised.paceBytesPerS).toBe(PACE_UNMEASURED);
    expect(governor.stats.paceBytesPerS).toBeGreaterThan(100_000);
  });

  it('takes the counts mod 2^32, across a wrap', () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 16_000);
    governor.pingSent('peer', 10);
    governor.delivered('peer', 10, 0xffff_ff00, 0xffff_ff00);
    governor.pingSent('peer', 20);
    expect(() => governor.delivered('peer', 20, 0x100, 0x100)).not.toThrow();
  });
});
