// Pacing by what receivers got: the governor over a browser-like uplink (channels that take all at
// once, a router's queue behind them, receivers that answer pings through it), with timers that
// fire on time or up to 100 ms late.
import { describe, expect, it } from 'vitest';
import { PACE_UNMEASURED } from '../src/wire/peer-protocol.js';
import { DeliveryRate } from '../src/upload/delivery-rate.js';
import { UploadGovernor } from '../src/upload/upload-governor.js';
import { Prng, VirtualClock } from '@shoal/sim/kit';
import { EndlessSource, laggingClock, RouterLink, runPinging } from './router-link.js';

/** A governor starting at 16 KiB/s uploading to `receivers` peers over a link of `linkBytesPerS`. */
function uploader(clock: VirtualClock, linkBytesPerS: number, receivers = 2, backlogBytes = Infinity) {
  const governor = new UploadGovernor(clock, 0, 16 * 1024);
  const link = new RouterLink(clock, governor, linkBytesPerS);
  const sources = Array.from({ length: receivers }, (_, i) => new EndlessSource(link, `r${i}`, backlogBytes));
  link.sourceOf = (receiver) => sources.find((source) => source.receiver === receiver);
  for (const source of sources) governor.add(source);
  governor.pump();
  return { governor, link, sources, names: sources.map((source) => source.receiver) };
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

describe('pacing by what receivers got', () => {
  it('reaches 90% of its link within 10 s, on a 300 kbit/s and on a 10 Mbit/s uplink, and keeps the router queue short', async () => {
    for (const linkBytesPerS of [37_500, 1_250_000]) {
      const clock = new VirtualClock();
      const { governor, link, sources, names } = uploader(clock, linkBytesPerS);
      const sent = () => sources.reduce((sum, source) => sum + source.sent, 0);
      let worstQueueMs = 0;
      await runPinging(clock, link, names, 8000);
      const sentAt8 = sent();
      await runPinging(clock, link, names, 2000);
      // Seconds 8 to 10: the link carried 90% of what it can.
      expect((sent() - sentAt8) / 2).toBeGreaterThan(linkBytesPerS * 0.9);
      for (let i = 0; i < 20; i++) {
        await runPinging(clock, link, names, 250);
        worstQueueMs = Math.max(worstQueueMs, link.queueMs());
      }
      expect(governor.stats.linkEstimateBytesPerS).toBeGreaterThan(linkBytesPerS * 0.9);
      expect(governor.stats.linkEstimateBytesPerS).toBeLessThan(linkBytesPerS * 1.1);
      expect(governor.advertised.paceBytesPerS).toBeGreaterThan(linkBytesPerS * 0.8);
      // Past startup the pace cycles around the link: a probe above it is drained again.
      expect(worstQueueMs).toBeLessThan(600);
      governor.destroy();
    }
  });

  it('does not drift down when its timers fire up to 100 ms late', async () => {
    const clock = laggingClock(new Prng(7), 100);
    const linkBytesPerS = 37_500;
    const { governor, link, sources, names } = uploader(clock, linkBytesPerS);
    await runPinging(clock, link, names, 10_000);
    const sentAt10 = sources.reduce((sum, source) => sum + source.sent, 0);
    const paces = await runPinging(clock, link, names, 50_000);
    const sent = sources.reduce((sum, source) => sum + source.sent, 0) - sentAt10;
    // What the link carried over the last 50 s, and a pace that held (the late half no lower than the early one).
    expect(sent / 50).toBeGreaterThan(linkBytesPerS * 0.9);
    expect(mean(paces.slice(25))).toBeGreaterThan(mean(paces.slice(0, 25)) * 0.95);
    expect(Math.min(...paces.slice(5))).toBeGreaterThan(linkBytesPerS * 0.7);
    governor.destroy();
  });

  it('advertises what its link carries, held while nobody asks (capacity, not current use)', async () => {
    const clock = new VirtualClock();
    const { governor, link, sources, names } = uploader(clock, 37_500, 1, 400_000);
    await runPinging(clock, link, names, 15_000);
    expect(sources[0]!.backlogBytes).toBe(0);
    const measured = governor.advertised.paceBytesPerS;
    expect(measured).toBeGreaterThan(37_500 * 0.8);
    // 30 s with nothing to send: a viewer nobody asked is still worth asking.
    await clock.advance(30_000);
    expect(governor.advertised.paceBytesPerS).toBe(measured);
    expect(governor.stats.linkEstimateBytesPerS).toBeGreaterThan(37_500 * 0.9);
    governor.destroy();
  });

  it('does not advertise a rate before the receivers showed one: requesters judge it by what they measured', () => {
    const governor = new UploadGovernor(new VirtualClock(), 0, 16 * 1024);
    expect(governor.advertised.paceBytesPerS).toBe(PACE_UNMEASURED);
    expect(governor.stats.linkEstimateBytesPerS).toBeUndefined();
  });

  it('scales one receiver\'s rate by its share of what was sent, and marks spans that held idle time as app-limited', () => {
    const rate = new DeliveryRate();
    rate.sent(1000); // a burst under way
    rate.pingSent('a', 0, 1000);
    rate.pong('a', 0, 1000, 1000);
    rate.sent(30_000);
    rate.sent(10_000); // 30 kB to a, 10 kB to another receiver
    rate.pingSent('a', 1000, 31_000);
    // a got its 30 kB over 1 s of its clock: the link carried 40 kB/s.
    expect(rate.pong('a', 1000, 2000, 31_000)).toEqual({ bytesPerS: 40_000, sentBytesPerS: 40_000, appLimited: false });
    rate.appLimited(); // uploads ran dry
    rate.sent(20_000);
    rate.pingSent('a', 2000, 51_000);
    expect(rate.pong('a', 2000, 3000, 51_000)).toMatchObject({ bytesPerS: 20_000, appLimited: true });
  });

  it('takes no sample from a count far beyond what was sent over the span (a receiver whose count restarted, a clock that jumped)', () => {
    const rate = new DeliveryRate();
    rate.sent(1000);
    rate.pingSent('a', 0, 1000);
    rate.pong('a', 0, 1000, 1000);
    rate.sent(30_000);
    rate.pingSent('a', 1000, 31_000);
    // 30 kB sent over 1 s; the pong counts 300 MB more than the last one.
    expect(rate.pong('a', 1000, 2000, 300_001_000)).toBeUndefined();
  });

  it('takes the counts mod 2^32, across a wrap', () => {
    const rate = new DeliveryRate();
    rate.pingSent('peer', 10, 0);
    rate.pong('peer', 10, 0xffff_ff00, 0xffff_ff00);
    rate.sent(0x200);
    rate.pingSent('peer', 600, 0x200);
    expect(rate.pong('peer', 600, 0x100 + 400, 0x100)).toBeUndefined(); // 512 bytes: too few to sample, and no throw
  });
});
