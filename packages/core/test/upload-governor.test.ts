// The upload governor: its controller alone, its pacing and order over fake sources, and the
// whole loop (pings, delay samples, pace) over a fake link slower than its start pace.
import { describe, expect, it } from 'vitest';
import { PeerSession, type PeerSessionHooks } from '../src/peers/peer.js';
import { NOT_SERVING, PACE_UNMEASURED } from '../src/wire/peer-protocol.js';
import { MIN_PACE_BYTES_PER_S, TARGET_QUEUE_DELAY_MS, chunkBytesFor, nextPace } from '../src/upload/pace.js';
import { UploadGovernor, type UploadSource } from '../src/upload/upload-governor.js';
import { peerId } from './fakes.js';
import { askOneAfterAnother } from './legs.js';
import { VirtualClock, linkTransports } from '@shoal/sim/kit';

/** A source of one upload needed by `deadlineMs`, whose channel sends at once; it records what it sent, when. */
class Source implements UploadSource {
  bufferedAmount = 0;
  backlogBytes: number;
  sent: { atMs: number; bytes: number }[] = [];
  pingsResumed = 0;
  constructor(
    private readonly clock: VirtualClock,
    readonly deadlineMs: number,
    bytes: number,
  ) {
    this.backlogBytes = bytes;
  }
  get nextDeadlineMs(): number | undefined {
    return this.backlogBytes > 0 ? this.deadlineMs : undefined;
  }
  *queued(): Iterable<{ remainingBytes: number; deadlineMs: number }> {
    if (this.backlogBytes > 0) yield { remainingBytes: this.backlogBytes, deadlineMs: this.deadlineMs };
  }
  sendChunk(maxBytes: number): number {
    const bytes = Math.min(maxBytes, this.backlogBytes);
    this.backlogBytes -= bytes;
    this.sent.push({ atMs: this.clock.now(), bytes });
    return bytes;
  }
  uploading(): void {
    this.pingsResumed++;
  }
  get total(): number {
    return this.sent.reduce((sum, chunk) => sum + chunk.bytes, 0);
  }
}

/** A session's hooks: it serves a 60 kB segment of every sequence (or nothing; or, relaying, only its first `readable` bytes so far). */
function hooks(serves: boolean, readable?: number): PeerSessionHooks {
  const segment = new Uint8Array(60_000);
  return {
    onReady: () => {}, onAvailability: () => {},
    segmentSize: () => (serves ? segment.length : undefined),
    readableBytes: () => (serves ? (readable ?? segment.length) : undefined),
    readSegment: (_sequence, start, end) => (serves ? segment.slice(start, end) : undefined),
    uploadEnabled: () => serves,
    onBytesUp: () => {}, onViolation: () => {}, onClose: () => {},
  };
}

/**
 * Peer `remote` asks us for segments over a link of `linkBytesPerS` (it asks, one after another,
 * once `askOneAfterAnother` is called); `uploader` is our session, its pings to the peer counted in `pings.count`.
 */
function uploadingTo(clock: VirtualClock, governor: UploadGovernor, remote: number, linkBytesPerS: number, readable?: number) {
  const [mine, theirs] = linkTransports(clock, peerId(remote), peerId(1), { bytesPerS: linkBytesPerS, latencyMs: 30 });
  const pings = { count: 0 };
  const send = theirs.send.bind(theirs);
  theirs.send = (data: Uint8Array) => {
    if (data[0] === 0x0a) pings.count++;
    send(data);
  };
  const downloader = new PeerSession(mine, clock, hooks(false), new UploadGovernor(clock, 0, 64 * 1024), 500_000);
  const uploader = new PeerSession(theirs, clock, hooks(true, readable), governor, 500_000);
  downloader.start(false, 0, []);
  uploader.start(true, 0, [1]);
  return { downloader, uploader, pings };
}

describe('upload governor', () => {
  it('cuts the pace when the queueing delay is above target, grows it below target only while it held uploads back', () => {
    expect(nextPace(100_000, 6 * TARGET_QUEUE_DELAY_MS, 1000, true)).toBeCloseTo(25_000, -2); // far above: /4 per second
    expect(nextPace(100_000, 2 * TARGET_QUEUE_DELAY_MS, 500, false)).toBeLessThan(100_000);
    expect(nextPace(100_000, 0, 1000, true)).toBeCloseTo(200_000, -2); // idle queue, pace-limited: x2 per second
    expect(nextPace(100_000, 0, 1000, false)).toBe(100_000); // not using the pace: nothing learnt
    expect(nextPace(100_000, TARGET_QUEUE_DELAY_MS, 1000, true)).toBe(100_000);
    expect(nextPace(MIN_PACE_BYTES_PER_S, 5000, 1000, true)).toBe(MIN_PACE_BYTES_PER_S);
    expect(nextPace(100_000, 0, 1000, true, 120_000)).toBe(120_000); // the option's cap
  });

  it('sends small chunks at a low pace, so that none waits long in a router queue', () => {
    expect(chunkBytesFor(16_000)).toBe(1024);
    expect(chunkBytesFor(102_400)).toBe(4096);
    expect(chunkBytesFor(10_000_000)).toBe(16_384);
  });

  it('paces every upload together, the earliest deadline first, takes what it can meet, and pauses while yielding', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 50_000);
    const late = new Source(clock, 5, 100_000);
    const early = new Source(clock, 1, 100_000);
    governor.add(late);
    governor.add(early);
    governor.pump();
    await clock.advance(1000);
    // Nothing measured the uplink: the start pace holds (within one burst).
    expect(early.total + late.total).toBeGreaterThan(45_000);
    expect(early.total + late.total).toBeLessThan(55_000);
    expect(late.total).toBe(0); // the earlier deadline gets everything until it is done
    await clock.advance(1500);
    expect(early.backlogBytes).toBe(0);
    expect(late.total).toBeGreaterThan(0);
    expect(late.pingsResumed).toBe(1);
    // Not measured yet: a request is taken unless it would wait long behind the backlog.
    expect(governor.admit(50_000, clock.now() + 3000)).toBeUndefined();
    const backlog = new Source(clock, 9, 1_000_000);
    governor.add(backlog);
    expect(governor.admit(50_000, clock.now() + 3000)).toBeGreaterThan(20_000); // 20 s and more behind the backlog
    governor.remove(backlog);
    governor.setYielding(true);
    const before = late.total;
    await clock.advance(2000);
    expect(late.total).toBe(before);
    expect(governor.admit(50_000, clock.now() + 3000)).toBe(NOT_SERVING);
    expect(governor.stats).toMatchObject({ paceBytesPerS: 0, yielding: true });
    governor.setYielding(false);
    await clock.advance(500);
    expect(late.total).toBeGreaterThan(before);
    governor.destroy();
  });

  it("sends at its pace less 5% of the viewer's own origin downloads' rate, nothing when that is the whole pace", async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 50_000);
    const source = new Source(clock, 1, 200_000);
    governor.add(source);
    governor.setOriginDownloads(400_000); // their acknowledgements: 20 kB/s
    await clock.advance(2000);
    // 30 kB/s for 2 s, within one burst; the pace itself stays (the reserve comes and goes with each download).
    expect(source.total).toBeGreaterThan(55_000);
    expect(source.total).toBeLessThan(65_000);
    expect(governor.stats).toMatchObject({ paceBytesPerS: 50_000, downloadReserveBytesPerS: 20_000, yielding: false });
    governor.setOriginDownloads(1_200_000);
    await clock.advance(100);
    const held = source.total;
    await clock.advance(2000);
    expect(source.total).toBe(held);
    expect(governor.admit(50_000, clock.now() + 10_000)).toBeUndefined(); // a pause of a download's length: requests still queue
    governor.setOriginDownloads(0);
    await clock.advance(1000);
    expect(source.total - held).toBeGreaterThan(45_000);
    governor.destroy();
  });

  it('slows down when its pings go unanswered for longer than a round trip, before any late pong arrives', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 16 * 1024);
    const busy = new Source(clock, 0, 10_000_000);
    governor.add(busy);
    governor.pump();
    for (let i = 0; i < 8; i++) {
      governor.pingSent('a', 0);
      await clock.advance(20);
      governor.delaySample('a', 1000, 20); // no queue: slow start grows the pace
      await clock.advance(230);
    }
    const grown = governor.stats.paceBytesPerS;
    expect(grown).toBeGreaterThan(32 * 1024);
    // The queue now holds the pongs back: the pings still go out at the cadence, and none is answered.
    for (let i = 0; i < 6; i++) {
      governor.pingSent('a', 0);
      await clock.advance(250);
    }
    governor.pingSent('a', 0);
    expect(governor.stats.queueDelayMs).toBe(1500 - 20);
    expect(governor.stats.paceBytesPerS).toBeLessThan(grown / 2);
    governor.destroy();
  });

  it('caps its pace at what full channels carried only while there was always more to send', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 64 * 1024);
    const samples = async (count: number) => {
      for (let i = 0; i < count; i++) {
        governor.delaySample('a', 1000); // no queue
        await clock.advance(400);
      }
    };
    await samples(3);
    // A small upload whose channel reports full once, then nothing more to send for seconds: the
    // few bytes say how much there was, not what the uplink carries.
    const small = new Source(clock, 0, 3000);
    small.bufferedAmount = 20_000;
    governor.add(small);
    governor.pump();
    small.bufferedAmount = 0;
    await samples(8);
    expect(small.backlogBytes).toBe(0);
    expect(governor.stats.paceBytesPerS).toBeGreaterThanOrEqual(64 * 1024);
    // Channels full while more waits: the pace falls to about what they took.
    const big = new Source(clock, 1, 10_000_000);
    big.bufferedAmount = 20_000;
    governor.add(big);
    governor.pump();
    await samples(8);
    expect(governor.stats.paceBytesPerS).toBeLessThan(10 * 1024);
    governor.destroy();
  });

  it('probes again after idle from where its pace fell, never from above it, and its slow start stops where the uplink last pushed back', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 16 * 1024);
    const samples = async (count: number, delayMs: number) => {
      for (let i = 0; i < count; i++) {
        governor.delaySample('a', 1000 + delayMs);
        await clock.advance(250);
      }
    };
    const busy = new Source(clock, 0, 10_000_000);
    governor.add(busy);
    governor.pump();
    await samples(3, 0); // the base
    await samples(8, 0); // slow start: doubling per second
    const pushedBackAt = governor.stats.paceBytesPerS;
    expect(pushedBackAt).toBeGreaterThan(32 * 1024);
    await samples(10, 400); // the uplink's queue fills: the pace falls, below the start pace
    const fallenTo = governor.stats.paceBytesPerS;
    expect(fallenTo).toBeLessThan(16 * 1024);
    expect(governor.advertised.paceBytesPerS).toBe(fallenTo);
    governor.remove(busy);
    await clock.advance(6000); // idle
    const again = new Source(clock, clock.now(), 10_000_000);
    governor.add(again);
    governor.pump();
    // Not raised to the start pace (on a 125 kbit/s uplink that filled the router's queue at once,
    // and the viewer's own requests waited behind it), but probing again: not advertised as measured.
    expect(governor.stats.paceBytesPerS).toBe(fallenTo);
    expect(governor.advertised.paceBytesPerS).toBe(PACE_UNMEASURED);
    // The first sample after the pause does not count the idle seconds as time at the pace.
    await samples(1, 0);
    expect(governor.stats.paceBytesPerS).toBeLessThan(fallenTo * 1.3);
    // Slow start ends at once where the uplink last pushed back (here, where the pace fell to);
    // past it only probing, +15%/s while the pace holds uploads back.
    await samples(12, 0);
    expect(governor.stats.paceBytesPerS).toBeGreaterThan(fallenTo * 1.15 ** 2);
    expect(governor.stats.paceBytesPerS).toBeLessThan(fallenTo * 1.15 ** 3.5);
    governor.destroy();
  });

  it('reads its queue from the median of its peers\' delays, which one lying peer cannot pull down', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 100_000);
    governor.add(new Source(clock, 0, 10_000_000)); // uploading all along
    governor.pump();
    // Three samples each set the peers' bases (no queue yet)...
    for (let i = 0; i < 3; i++) {
      for (const peer of ['a', 'b', 'liar']) governor.delaySample(peer, 1000);
      await clock.advance(200);
    }
    // ...then the honest peers see 500 ms of queue; the liar's pongs say there is none.
    for (let i = 0; i < 10; i++) {
      governor.delaySample('a', 1500);
      governor.delaySample('b', 1500);
      governor.delaySample('liar', 1000);
      await clock.advance(200);
    }
    expect(governor.stats.queueDelayMs).toBe(500);
    expect(governor.stats.paceBytesPerS).toBeLessThan(40_000);
    // What HTTP budgets read: the last reading, drained by the time since (no newer reading comes).
    const readAtMs = clock.now() - 200;
    expect(governor.queueDelayNowMs(readAtMs)).toBe(500);
    expect(governor.queueDelayNowMs(readAtMs + 300)).toBe(200);
    expect(governor.queueDelayNowMs(readAtMs + 800)).toBe(0);
    governor.destroy();
  });

  it('asks every peer again when one reads a queue that the others\' older readings outvote', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 100_000);
    const sources = [new Source(clock, 0, 10_000_000), new Source(clock, 1, 0), new Source(clock, 2, 0)];
    for (const source of sources) governor.add(source);
    governor.pump();
    for (let i = 0; i < 3; i++) {
      for (const peer of ['a', 'b', 'c']) governor.delaySample(peer, 1000);
      await clock.advance(200);
    }
    const asked = () => sources.map((source) => source.pingsResumed);
    const before = asked();
    // The peer we upload to answers through a growing queue; the others last answered before it grew.
    governor.delaySample('a', 1050);
    expect(asked()).toEqual(before); // within target: nothing to confirm
    await clock.advance(300);
    governor.delaySample('a', 1400);
    expect(governor.stats.queueDelayMs).toBe(0); // outvoted...
    expect(asked()).toEqual(before.map((count) => count + 1)); // ...so every peer is asked now
    await clock.advance(300);
    governor.delaySample('a', 1600);
    expect(asked()).toEqual(before.map((count) => count + 1)); // at most once a second
    // Their answers come back through the queue: the readings agree.
    governor.delaySample('b', 1600);
    expect(governor.stats.queueDelayMs).toBe(600);
    governor.destroy();
  });

  it('finds a pace below an uplink slower than its start pace, from the peers\' pongs', async () => {
    const clock = new VirtualClock();
    const linkBytesPerS = 20_000;
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: linkBytesPerS, latencyMs: 30 });
    const uploaderGovernor = new UploadGovernor(clock, 0, 64 * 1024);
    const downloader = new PeerSession(mine, clock, hooks(false), new UploadGovernor(clock, 0, 64 * 1024), 500_000);
    const uploader = new PeerSession(theirs, clock, hooks(true), uploaderGovernor, 500_000);
    downloader.start(false, 0, []);
    uploader.start(true, 0, [1]);
    await clock.advance(100);
    askOneAfterAnother(downloader, clock);
    await clock.advance(30_000);
    const paces: number[] = [];
    for (let second = 0; second < 30; second++) {
      await clock.advance(1000);
      paces.push(uploaderGovernor.stats.paceBytesPerS);
    }
    expect(uploaderGovernor.stats.queueDelayMs).toBeDefined();
    // The pace settled near the link's rate, not at 64 KiB/s (between the caps at what the channels
    // and the receivers took x 1.1 it probes upward), and what waits in the channel is a fraction of a second.
    const meanPace = paces.reduce((sum, pace) => sum + pace, 0) / paces.length;
    expect(meanPace).toBeLessThan(linkBytesPerS * 1.3);
    expect(Math.min(...paces)).toBeGreaterThan(linkBytesPerS * 0.3);
    expect((theirs.bufferedAmount / linkBytesPerS) * 1000).toBeLessThan(500);
    // And the pinger learnt what the uploader's link delivers, not the pace it probes with.
    expect(downloader.expectedRate.bytesPerS).toBeLessThan(linkBytesPerS * 1.15);
    downloader.close();
    uploader.close();
  });

  it('pings the peers it uploads to every second (a relay waiting for bytes too), its other neighbours every 4 s (each message costs a small uplink a packet and an acknowledgement)', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 64 * 1024);
    const asking = uploadingTo(clock, governor, 2, 20_000);
    const idle = uploadingTo(clock, governor, 3, 20_000);
    const relayed = uploadingTo(clock, governor, 4, 20_000, 0); // its segment's bytes have not reached us yet
    await clock.advance(100);
    askOneAfterAnother(asking.downloader, clock);
    askOneAfterAnother(relayed.downloader, clock);
    await clock.advance(2000);
    for (const { pings } of [asking, idle, relayed]) pings.count = 0;
    await clock.advance(20_000);
    expect(asking.pings.count).toBeGreaterThanOrEqual(18);
    expect(relayed.pings.count).toBeGreaterThanOrEqual(18);
    expect(idle.pings.count).toBeGreaterThanOrEqual(3);
    expect(idle.pings.count).toBeLessThanOrEqual(7);
    for (const { downloader, uploader } of [asking, idle, relayed]) {
      downloader.close();
      uploader.close();
    }
  });

  it('pings the peer it uploads to four times a second while it probes for its uplink\'s rate, once a second after the uplink pushed back (a second-old reading let the pace double past a small uplink)', async () => {
    const pingsOver = async (linkBytesPerS: number) => {
      const clock = new VirtualClock();
      const governor = new UploadGovernor(clock, 0, 16 * 1024);
      const { downloader, uploader, pings } = uploadingTo(clock, governor, 2, linkBytesPerS);
      await clock.advance(100);
      askOneAfterAnother(downloader, clock);
      await clock.advance(5000);
      const probing = governor.advertised.paceBytesPerS === PACE_UNMEASURED;
      pings.count = 0;
      await clock.advance(4000);
      downloader.close();
      uploader.close();
      return { probing, pings: pings.count };
    };
    // A fast uplink: still probing (the pace keeps doubling), four readings a second.
    const fast = await pingsOver(10_000_000);
    expect(fast.probing).toBe(true);
    expect(fast.pings).toBeGreaterThanOrEqual(14);
    // An uplink slower than the start pace pushed back within the first seconds: a reading a second.
    const slow = await pingsOver(10_000);
    expect(slow.probing).toBe(false);
    expect(slow.pings).toBeGreaterThanOrEqual(3);
    expect(slow.pings).toBeLessThanOrEqual(6);
  });

  it('does not advertise its start pace: until its uplink pushes back, requesters judge its rate by what they measured', async () => {
    const clock = new VirtualClock();
    const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 10_000_000, latencyMs: 30 });
    const hooks = (serves: boolean): PeerSessionHooks => ({
      onReady: () => {}, onAvailability: () => {},
      segmentSize: () => (serves ? 1_000_000 : undefined),
      readableBytes: () => (serves ? 1_000_000 : undefined),
      readSegment: () => undefined,
      uploadEnabled: () => serves,
      onBytesUp: () => {}, onViolation: () => {}, onClose: () => {},
    });
    const idleUploader = new UploadGovernor(clock, 0, 32 * 1024);
    expect(idleUploader.advertised.paceBytesPerS).toBe(PACE_UNMEASURED);
    const downloader = new PeerSession(mine, clock, hooks(false), new UploadGovernor(clock, 0, 32 * 1024), 400_000);
    const uploader = new PeerSession(theirs, clock, hooks(true), idleUploader, 400_000);
    downloader.start(false, 0, []);
    uploader.start(true, 0, [1]);
    await clock.advance(2000);
    // The handshake's ping arrived; a 1 MB segment at a 32 KiB/s start pace would take 30 s and never be asked for.
    expect(downloader.expectedRate).toEqual({ bytesPerS: 400_000, waitMs: 0 });
    downloader.close();
    uploader.close();
  });
});
