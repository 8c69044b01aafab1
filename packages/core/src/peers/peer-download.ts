// What we download from one peer: the leg it brings us now (one at a time: a peer serves us one
// byte range at a time), checked against the session's rules as its bytes arrive and handed
// straight to its transfer; the rate it delivered at; and how long to leave it alone after
// it failed us (silent, trickling, lying) or said busy.
import type { Clock } from '../types.js';
import { NO_DEADLINE, NOT_SERVING, TO_SEGMENT_END, measuredPace, type PeerMessage } from '../wire/peer-protocol.js';

/** What a session reads of a leg it brings: the byte range, how far it got, and the segment it is of. */
export interface PeerLeg {
  readonly transfer: { readonly sequence: number; readonly totalBytes: number | undefined };
  readonly start: number;
  /** The next byte to arrive. */
  readonly next: number;
  /** Exclusive; Infinity: to the segment's end. */
  readonly end: number;
  readonly received: number;
  readonly startedMs: number;
}

/** What a peer session hands the bytes of a leg to (the stream's Transfers, whose legs are PeerLegs and more). */
export interface LegSink {
  /** The segment's size, as the leg's first data says: false when another leg said another. */
  sized(leg: PeerLeg, totalBytes: number): boolean;
  arrived(leg: PeerLeg, chunk: Uint8Array): void;
  /** The peer sent the leg's last byte. */
  finished(leg: PeerLeg): void;
  /**
   * The peer answered absent or busy, or (`size`) its size differs from another sender's, or it
   * left: the leg's rest must come from elsewhere. `void`: a relay's own copy failed, and the bytes
   * it relayed to us are void too.
   */
  failed(leg: PeerLeg, reason: LegFailure): void;
}

export type LegFailure = 'absent' | 'busy' | 'size' | 'gone' | 'void';

/** The peer's upload state from its last ping or pong (undefined: none came yet). */
type Advertised = { paceBytesPerS: number; backlogBytes: number } | undefined;

/**
 * After a cancel, a sender's trailing chunks are what its channel and its router's queue held: a
 * second or two on a slow uplink (the governor keeps at most 128 KiB unsent, the router ~0.6 s).
 */
const CANCEL_QUIET_MS = 5000;
/** A cancelled transfer shorter than this says little about the peer's rate (request latency dominates). */
const MIN_RATE_SAMPLE_MS = 250;
/**
 * A leg from this peer that we cancelled while it delivered next to nothing (below
 * STALLED_BYTES_PER_S) though it said no upload was queued ahead of ours, or that it refused as
 * `absent` after announcing the segment: we leave the peer alone for 1 s, doubling with every such
 * failure in a row up to a minute, until it completes a leg. Silent, trickling and lying peers
 * are starved this way; an honest peer that is slow, or busy serving others, is not held back.
 */
const FAILURE_BACKOFF_MS = 1000;
const MAX_FAILURE_BACKOFF_MS = 60_000;
const STALLED_BYTES_PER_S = 2048;
/** A `busy` that says how long: not asked again before then (at most this long); one that does not serve now, this long. */
const MAX_BUSY_WAIT_MS = 4000;
const NOT_SERVING_WAIT_MS = 2000;

/** A rate sample blended into a peer's download rate: half the old rate, half the new. */
function blendRate(bytesPerS: number, bytes: number, elapsedMs: number): number {
  return 0.5 * bytesPerS + 0.5 * ((bytes / elapsedMs) * 1000);
}

export class PeerDownload {
  /** The leg the peer brings us now, and where its bytes go. */
  private current: { leg: PeerLeg; sink: LegSink } | undefined;
  /** Sequences whose legs we cancelled, and when: their trailing chunks are ignored, not violations. */
  private readonly cancelled = new Map<number, number>();
  /** Download rate from this peer, bytes/s: an average over its legs. */
  throughputBytesPerS: number;
  /** The peer said busy, or failed us: do not ask it again before this time. */
  busyUntilMs = 0;
  /** Legs it failed in a row. */
  private failures = 0;

  constructor(
    private readonly clock: Clock,
    initialThroughputBytesPerS: number,
  ) {
    this.throughputBytesPerS = initialThroughputBytesPerS;
  }

  get leg(): PeerLeg | undefined {
    return this.current?.leg;
  }

  /** It failed us lately and its backoff runs: what it announces is not worth waiting for, nor a reason for an elected seeder to leave a segment to it. */
  get failing(): boolean {
    return this.failures > 0 && this.busyUntilMs > this.clock.now();
  }

  /**
   * A leg of the segment was cancelled here within CANCEL_QUIET_MS: chunks of it may still be on
   * the way, and would be taken for a new leg's. After that the peer may be asked again (else a
   * segment cancelled at its only holder, with no deadline to send it to the origin, waited for ever).
   */
  cancelledRecently(sequence: number): boolean {
    const atMs = this.cancelled.get(sequence);
    return atMs !== undefined && this.clock.now() - atMs < CANCEL_QUIET_MS;
  }

  /**
   * The rate a new request to this peer would get, bytes/s: what the peer says its link delivers
   * (0: it does not serve), up to what we measured from it (before any leg, the modest initial
   * rate): a liar advertising an enormous pace was asked first for every segment. And how long
   * its queued uploads will keep a new request waiting.
   */
  expectedRate(advertised: Advertised): { bytesPerS: number; waitMs: number } {
    const bytesPerS = Math.min(measuredPace(advertised?.paceBytesPerS) ?? Infinity, this.throughputBytesPerS);
    return { bytesPerS, waitMs: bytesPerS > 0 ? ((advertised?.backlogBytes ?? 0) / bytesPerS) * 1000 : Infinity };
  }

  /** Asks for `leg`; returns the request to send. */
  request(leg: PeerLeg, withinMs: number, sink: LegSink): PeerMessage {
    this.cancelled.delete(leg.transfer.sequence);
    this.current = { leg, sink };
    // A finite wait stays below NO_DEADLINE, which would mean none.
    const within = Math.max(0, Math.min(Math.round(withinMs), NO_DEADLINE - 1));
    return { type: 'request', sequence: leg.transfer.sequence, start: leg.next, end: Number.isFinite(leg.end) ? leg.end : TO_SEGMENT_END, withinMs: within };
  }

  /** A data message: a violation (to ban the peer for), or undefined. */
  data(sequence: number, offset: number, totalBytes: number, payload: Uint8Array, remoteSays: Advertised): string | undefined {
    const current = this.current;
    if (!current || current.leg.transfer.sequence !== sequence) {
      return this.cancelled.has(sequence) ? undefined : `data for segment ${sequence} never requested`;
    }
    const { leg, sink } = current;
    if (totalBytes === 0) return 'empty segment';
    if (leg.received === 0 && leg.transfer.totalBytes !== totalBytes && !sink.sized(leg, totalBytes)) {
      // Another sender said another size: one of them is wrong, and we cannot tell which.
      this.stop(remoteSays);
      sink.failed(leg, 'size');
      return undefined;
    }
    if (leg.transfer.totalBytes !== totalBytes) return `segment size changed from ${leg.transfer.totalBytes} to ${totalBytes}`;
    if (offset !== leg.next) return `chunk at ${offset}, expected ${leg.next}`;
    if (offset + payload.length > leg.end) return `chunk ${offset}+${payload.length} past the range asked (to ${leg.end})`;
    sink.arrived(leg, payload);
    return undefined;
  }

  /** `done`: a violation, or undefined. */
  done(sequence: number, totalBytes: number): string | undefined {
    const current = this.current;
    if (!current || current.leg.transfer.sequence !== sequence) {
      return this.cancelled.has(sequence) ? undefined : `done for segment ${sequence} never requested`;
    }
    const { leg, sink } = current;
    // A range that starts past the segment's end (the plan split an estimated size) is done at
    // once, maybe before any data said the size.
    if (leg.transfer.totalBytes === undefined && !sink.sized(leg, totalBytes)) return undefined;
    if (leg.transfer.totalBytes !== totalBytes || leg.next < Math.min(leg.end, totalBytes)) return `done after ${leg.next} of ${Math.min(leg.end, totalBytes)} bytes`;
    this.current = undefined;
    this.failures = 0;
    const elapsedMs = Math.max(this.clock.now() - leg.startedMs, 1);
    if (leg.received > 0) this.throughputBytesPerS = blendRate(this.throughputBytesPerS, leg.received, elapsedMs);
    sink.finished(leg);
    return undefined;
  }

  /** `busy` (with the wait the peer would need) or `absent` (`relayed`: it was relaying the segment, no lie); returns whether it answered our leg. */
  refused(message: { type: 'busy'; sequence: number; waitMs: number } | { type: 'absent'; sequence: number }, relayed: boolean): boolean {
    const current = this.current;
    if (current?.leg.transfer.sequence !== message.sequence) return false; // an answer to a cancelled request
    this.current = undefined;
    if (message.type === 'busy') {
      this.busyUntilMs = this.clock.now() + (message.waitMs === NOT_SERVING ? NOT_SERVING_WAIT_MS : Math.min(message.waitMs, MAX_BUSY_WAIT_MS));
    } else if (!relayed) this.failed();
    // A relay whose own copy failed ends what it relayed with `absent`: those bytes are void.
    current.sink.failed(current.leg, message.type === 'absent' && relayed && current.leg.received > 0 ? 'void' : message.type);
    return true;
  }

  /** We give up the leg (the plan moved it elsewhere): returns the cancel to send, if it was the peer's. */
  cancel(leg: PeerLeg, remoteSays: Advertised): PeerMessage | undefined {
    if (this.current?.leg !== leg) return undefined;
    this.stop(remoteSays);
    return { type: 'cancel', sequence: leg.transfer.sequence };
  }

  /** The session closed: the leg it was bringing is orphaned (the plan moves it). */
  close(): void {
    const current = this.current;
    this.current = undefined;
    current?.sink.failed(current.leg, 'gone');
  }

  private stop(remoteSays: Advertised): void {
    const leg = this.current!.leg;
    this.current = undefined;
    // A cancelled leg's rate counts too: else a slow peer, whose legs are all cancelled before
    // `done`, keeps its assumed start rate and is picked first again and again.
    const elapsedMs = this.clock.now() - leg.startedMs;
    if (elapsedMs >= MIN_RATE_SAMPLE_MS) {
      this.throughputBytesPerS = blendRate(this.throughputBytesPerS, leg.received, elapsedMs);
      // Next to nothing arrived, and what the peer said was queued ahead of us would have gone by now at its rate: silent or trickling.
      if (this.expectedRate(remoteSays).waitMs < elapsedMs && (leg.received / elapsedMs) * 1000 < STALLED_BYTES_PER_S) this.failed();
    }
    this.cancelled.set(leg.transfer.sequence, this.clock.now());
    if (this.cancelled.size > 32) this.cancelled.delete(this.cancelled.values().next().value!);
  }

  private failed(): void {
    const backoffMs = Math.min(MAX_FAILURE_BACKOFF_MS, FAILURE_BACKOFF_MS * 2 ** this.failures);
    this.failures += 1;
    this.busyUntilMs = Math.max(this.busyUntilMs, this.clock.now() + backoffMs);
  }
}
