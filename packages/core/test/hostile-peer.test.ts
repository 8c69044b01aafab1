// PeerSession against a hostile remote speaking the wire protocol by hand: what a silent, lying or
// flooding peer gets from us. Over a fake link on the virtual clock.
import { describe, expect, it } from 'vitest';
import { PeerSession, type PeerSessionHooks } from '../src/peers/peer.js';
import { PROTOCOL_VERSION, decode, encode, type PeerMessage } from '../src/wire/peer-protocol.js';
import { UploadGovernor } from '../src/upload/upload-governor.js';
import { UNPACED, peerId } from './fakes.js';
import { askFor } from './legs.js';
import { VirtualClock, linkTransports } from '@shoal/sim/kit';

function setup(segment?: Uint8Array, paceBytesPerS = UNPACED.initialUploadPaceBytesPerS) {
  const clock = new VirtualClock();
  const [mine, theirs] = linkTransports(clock, peerId(1), peerId(2), { bytesPerS: 10_000_000, latencyMs: 5 });
  const violations: string[] = [];
  const hooks: PeerSessionHooks = {
    onReady: () => {}, onAvailability: () => {},
    segmentSize: () => segment?.length,
    readableBytes: () => segment?.length,
    readSegment: (_sequence, start, end) => segment?.slice(start, end),
    uploadEnabled: () => segment !== undefined,
    onBytesUp: () => {}, onViolation: (_peer, reason) => violations.push(reason), onClose: () => {},
  };
  const session = new PeerSession(mine, clock, hooks, new UploadGovernor(clock, 0, paceBytesPerS), 500_000);
  const received: PeerMessage[] = [];
  theirs.setEvents({ message: (bytes) => { const result = decode(bytes); if (result.ok) received.push(result.message); }, close: () => {}, drain: () => {} });
  const hostile = (message: PeerMessage) => theirs.send(encode(message));
  session.start(segment !== undefined, 0, []);
  hostile({ type: 'handshake', version: PROTOCOL_VERSION, uploads: true });
  hostile({ type: 'availability', firstSequence: 0, states: Array.from({ length: 64 }, () => 1 as const) });
  return { clock, session, hostile, received, violations };
}

describe('a hostile peer', () => {
  it('that fails transfers (silent or trickling while it says it is idle, or absent after announcing) is left alone longer each time, until it completes one', async () => {
    const { clock, session, hostile } = setup();
    await clock.advance(50);
    const waits: number[] = [];
    // Silent twice: we cancel each transfer as it falls behind.
    for (const sequence of [1, 2]) {
      const { leg } = askFor(session, clock, sequence);
      await clock.advance(3000);
      session.cancelLeg(leg);
      waits.push(session.download.busyUntilMs - clock.now());
    }
    // Then it lies: "absent" for a segment it announced.
    askFor(session, clock, 3);
    hostile({ type: 'absent', sequence: 3 });
    await clock.advance(50);
    waits.push(Math.round((session.download.busyUntilMs - clock.now()) / 100) * 100);
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(session.mayRequest(3)).toBe(false);
    // A transfer it completes clears the record.
    await clock.advance(5000);
    const complete = askFor(session, clock, 4);
    hostile({ type: 'data', sequence: 4, offset: 0, totalBytes: 3, payload: new Uint8Array([1, 2, 3]) });
    hostile({ type: 'done', sequence: 4, totalBytes: 3 });
    await clock.advance(50);
    expect(complete.finished).toBe(true);
    session.cancelLeg(askFor(session, clock, 5).leg);
    // (cancelled at once: too short to judge)
    expect(session.download.busyUntilMs).toBeLessThanOrEqual(clock.now());
    await clock.advance(2000);
    const silent = askFor(session, clock, 6);
    await clock.advance(3000);
    session.cancelLeg(silent.leg);
    expect(session.download.busyUntilMs - clock.now()).toBe(1000);
    // An honest peer that is only slow (5 KB/s here) is not held back.
    await clock.advance(2000);
    const slow = askFor(session, clock, 7);
    for (let k = 0; k < 10; k += 1) {
      hostile({ type: 'data', sequence: 7, offset: k * 1000, totalBytes: 100_000, payload: new Uint8Array(1000) });
      await clock.advance(200);
    }
    session.cancelLeg(slow.leg);
    expect(session.download.busyUntilMs).toBeLessThanOrEqual(clock.now());
    // Nor one that said others' uploads were queued ahead of ours (it is not idle, only busy).
    hostile({ type: 'ping', sentMs: 0, paceBytesPerS: 50_000, backlogBytes: 500_000 });
    await clock.advance(50);
    const queued = askFor(session, clock, 8);
    await clock.advance(3000);
    session.cancelLeg(queued.leg);
    expect(session.download.busyUntilMs).toBeLessThanOrEqual(clock.now());
    session.close();
  });

  it('that advertises an enormous upload rate is believed only up to what we measured from it (before any leg, the initial rate)', async () => {
    const { clock, session, hostile } = setup();
    hostile({ type: 'ping', sentMs: 0, paceBytesPerS: 0xffff_fffe, backlogBytes: 1 });
    await clock.advance(50);
    expect(session.expectedRate.bytesPerS).toBe(500_000);
    // It delivers 100 kB in about a second: what we believe of it falls towards that.
    const leg = askFor(session, clock, 1);
    for (let k = 0; k < 10; k += 1) {
      hostile({ type: 'data', sequence: 1, offset: k * 10_000, totalBytes: 100_000, payload: new Uint8Array(10_000) });
      await clock.advance(100);
    }
    hostile({ type: 'done', sequence: 1, totalBytes: 100_000 });
    await clock.advance(50);
    expect(leg.finished).toBe(true);
    expect(session.expectedRate.bytesPerS).toBe(session.download.throughputBytesPerS);
    expect(session.expectedRate.bytesPerS).toBeLessThan(350_000);
    session.close();
  });

  it('that floods requests gets at most eight queued, and busy with the wait for the rest', async () => {
    // A pace that keeps the first uploads under way while the others arrive; no deadlines, so the pace alone does not refuse them.
    const { clock, session, hostile, received } = setup(new Uint8Array(100_000), 200_000);
    await clock.advance(50);
    for (let sequence = 1; sequence <= 12; sequence += 1) hostile({ type: 'request', sequence, start: 0, end: 0xffff_ffff, withinMs: 0xffff_ffff });
    await clock.advance(100);
    const busy = received.filter((message) => message.type === 'busy') as { sequence: number; waitMs: number }[];
    expect(busy.map((message) => message.sequence)).toEqual([9, 10, 11, 12]);
    expect(busy.every((message) => message.waitMs > 0)).toBe(true);
    expect(received.some((message) => message.type === 'data' && message.sequence === 1)).toBe(true);
    session.close();
  });

  it('that announces ever more segments is disconnected and banned before its map grows without bound', async () => {
    const { clock, session, hostile, violations } = setup();
    for (let k = 0; k < 8200; k += 1) hostile({ type: 'have', sequence: 100_000 + k, state: 1 });
    await clock.advance(100);
    expect(violations).toEqual(['announced more than 8192 segments at once']);
    session.close();
  });
});
