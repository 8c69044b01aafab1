// The upload governor: its pacing and order over fake sources, its queue guard, and the whole loop
// (pings, pongs, pace) over a fake link slower than its start pace. Pacing by delivery rate over a
// browser-like link is in delivery-rate.test.ts.
import { describe, expect, it } from 'vitest';
import { PeerSession, type PeerSessionHooks } from '../src/peers/peer.js';
import { NOT_SERVING, PACE_UNMEASURED } from '../src/wire/peer-protocol.js';
import { chunkBytesFor } from '../src/upload/pace.js';
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
  burstEdge(): void {}
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
  it('sends small chunks at a low pace, so that none waits long in a router queue', () => {
    expect(chunkBytesFor(16_000)).toBe(1024);
    expect(chunkBytesFor(102_400)).toBe(4096);
    expect(chunkBytesFor(10_000_000)).toBe(16_384);
  });

  it('paces every upload together, the earliest deadline first, takes what it can meet, and pauses while yielding', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 50_000);
    const late = new Source(clock, 5, 300_000);
    const early = new Source(clock, 1, 100_000);
    governor.add(late);
    governor.add(early);
    governor.pump();
    await clock.advance(1000);
    // Nothing measured the uplink: the start pace, growing while it holds uploads back, to at most twice the start.
    expect(early.total + late.total).toBeGreaterThan(50_000);
    expect(early.total + late.total).toBeLessThanOrEqual(100_000);
    expect(late.total).toBe(0); // the earlier deadline gets everything until it is done
    await clock.advance(1500);
    expect(early.backlogBytes).toBe(0);
    expect(late.total).toBeGreaterThan(0);
    expect(late.pingsResumed).toBe(1);
    // Not measured yet: a request is taken unless it would wait long behind the backlog.
    expect(governor.admit(50_000, clock.now() + 3000)).toBeUndefined();
    const backlog = new Source(clock, 9, 1_000_000);
    governor.add(backlog);
    expect(governor.admit(50_000, clock.now() + 3000)).toBeGreaterThan(5_000); // many seconds behind the backlog
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

  it("leaves 5% of the rate of the download its player waits on, at most 40% of its pace: uploads slow down for it, never stop", async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 50_000);
    const source = new Source(clock, 1, 400_000);
    governor.add(source);
    governor.setOriginDownloads(400_000); // their acknowledgements: 20 kB/s
    await clock.advance(2000);
    // 30 kB/s for 2 s, within one burst; the pace does not grow on time held back for the download.
    expect(source.total).toBeGreaterThan(55_000);
    expect(source.total).toBeLessThan(75_000);
    expect(governor.stats).toMatchObject({ paceBytesPerS: 50_000, downloadReserveBytesPerS: 20_000, yielding: false });
    // A download whose acknowledgements would take the whole pace: 40% of it at most.
    governor.setOriginDownloads(1_200_000);
    const before = source.total;
    await clock.advance(2000);
    expect(governor.stats.downloadReserveBytesPerS).toBe(20_000);
    expect(source.total - before).toBeGreaterThan(55_000);
    governor.setOriginDownloads(0);
    expect(governor.stats.downloadReserveBytesPerS).toBe(0);
    governor.destroy();
  });
  it('reads a queue from pings unanswered for longer than a round trip, before any late pong arrives, and a queue past its guard ends startup', async () => {
    const clock = new VirtualClock();
    const governor = new UploadGovernor(clock, 0, 16 * 1024);
    const busy = new Source(clock, 0, 10_000_000);
    governor.add(busy);
    governor.pump();
    for (let i = 0; i < 8; i++) {
      governor.pingSent('a', 0, 0);
      await clock.advance(20);
      governor.delaySample('a', 1000, 20); // no queue
      await clock.advance(230);
    }
    expect(governor.stats.paceBytesPerS).toBeGreaterThan(16 * 1024); // startup: growing while it holds uploads back
    // The queue now holds the pongs back: the pings still go out at the cadence, and none is answered.
    for (let i = 0; i < 6; i++) {
      governor.pingSent('a', 0, 0);
      await clock.advance(250);
    }
    governor.pingSent('a', 0, 0);
    expect(governor.stats.queueDelayMs).toBe(1500 - 20);
    // Far past the guard: startup is over, the pace grows no more.
    const ended = governor.stats.paceBytesPerS;
    await clock.advance(2000);
    expect(governor.stats.paceBytesPerS).toBe(ended);
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
    // What HTTP budgets read: the last reading, drained by the time since (no newer reading comes).
    const readAtMs = clock.now() - 200;
    expect(governor.controller.queueDelayNowMs(readAtMs)).toBe(500);
    expect(governor.controller.queueDelayNowMs(readAtMs + 300)).toBe(200);
    expect(governor.controller.queueDelayNowMs(readAtMs + 800)).toBe(0);
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
    expect(meanPace).toBeLessThan(linkBytesPerS * 1.4); // the gain cycle probes 25% above for a sixth of the time
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
    const pingsOver = async (linkBytesPerS: number, probeMs: number) => {
      const clock = new VirtualClock();
      const governor = new UploadGovernor(clock, 0, 16 * 1024);
      const { downloader, uploader, pings } = uploadingTo(clock, governor, 2, linkBytesPerS);
      await clock.advance(100);
      askOneAfterAnother(downloader, clock);
      await clock.advance(probeMs);
      const probing = governor.advertised.paceBytesPerS === PACE_UNMEASURED;
      pings.count = 0;
      await clock.advance(1000);
      downloader.close();
      uploader.close();
      return { probing, pings: pings.count };
    };
    // A fast uplink in its first seconds: still probing (the pace keeps doubling), four readings a second.
    const fast = await pingsOver(10_000_000, 500);
    expect(fast.probing).toBe(true);
    expect(fast.pings).toBeGreaterThanOrEqual(3);
    // An uplink slower than the start pace pushed back within the first seconds: a reading a second.
    const slow = await pingsOver(10_000, 5000);
    expect(slow.probing).toBe(false);
    expect(slow.pings).toBeGreaterThanOrEqual(1);
    expect(slow.pings).toBeLessThanOrEqual(2);
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
