// What the uplink delivers, as the receivers count it (in the spirit of BBR's delivery rate). Each
// receiver's pong counts every byte it got from us, at its clock when our ping arrived. The channel
// is ordered, so a ping arrives after every byte sent to that receiver before it: the bytes between
// two pings, over the receiver's clock between their arrivals, are the rate the link delivered
// them at. Uploads to several receivers share one uplink, so a receiver that got a share s of what
// we sent meanwhile says the uplink delivered about its rate / s. A sample taken while uploads ran
// dry, yielded or left room for the viewer's own downloads is app-limited: it says how much there
// was to send, not what the link carries, and may raise the estimate but never lower it.
import { wireMsDiff } from '../wire/peer-protocol.js';

/** A ping as sent: our clock on the wire, and the uploads' counters then. */
interface PingMark {
  sentMs: number;
  /** Payload bytes sent to every receiver, and to this one, before the ping. */
  sentAll: number;
  sentHere: number;
  /** Times uploads became app-limited or stopped being so, before the ping: a span whose ends differ held idle time. */
  appLimits: number;
}

/** A receiver's reference pong: its count, its clock at the ping's arrival, and that ping. */
interface PongMark {
  deliveredBytes: number;
  remoteMs: number;
  ping: PingMark;
}

export interface DeliverySample {
  /** What the uplink delivered, bytes/s, over the sample's span. */
  bytesPerS: number;
  /** What we sent at over the same span, on our clock, bytes/s. */
  sentBytesPerS: number;
  /** Uploads ran dry, yielded or held back during the span: the sample cannot lower the estimate. */
  appLimited: boolean;
}

/** A sample spans at least this much of the receiver's clock and carries MIN_SAMPLE_BYTES (shorter spans are timer noise in a browser). */
export const MIN_SPAN_MS = 200;
const MIN_SAMPLE_BYTES = 8 * 1024;
/** A receiver that got less than this share of what we sent meanwhile says too little of the whole link. */
const MIN_RECEIVER_SHARE = 0.25;
/** A sample may show at most this many times the rate we sent at over its span (a queue that drained meanwhile). */
const MAX_DRAIN_SPEEDUP = 4;
/** Ping marks kept per receiver (pings are answered in order; a few may be lost with a closing channel). */
const MAX_MARKS = 8;

export class DeliveryRate {
  private sentAll = 0;
  private appLimits = 0;
  /** Uploads have been app-limited since the last byte sent: a ping sent now opens an app-limited span. */
  private dry = true;
  private readonly pings = new Map<string, PingMark[]>();
  private readonly references = new Map<string, PongMark>();

  /** Payload bytes handed to the channels. */
  sent(bytes: number): void {
    this.sentAll += bytes;
    if (bytes > 0 && this.dry) {
      this.dry = false;
      this.appLimits++;
    }
  }

  /** Uploads did not use the whole pace (nothing to send, yielding, or a reserve for the viewer's downloads). */
  appLimited(): void {
    if (!this.dry) this.appLimits++;
    this.dry = true;
  }

  /** A ping goes out with `wireSentMs` (as the pong will echo it), after `sentHere` payload bytes to that receiver in all. */
  pingSent(peerId: string, wireSentMs: number, sentHere: number): void {
    let marks = this.pings.get(peerId);
    if (!marks) this.pings.set(peerId, (marks = []));
    marks.push({ sentMs: wireSentMs, sentAll: this.sentAll, sentHere, appLimits: this.appLimits });
    if (marks.length > MAX_MARKS) marks.shift();
  }

  /** A pong: the ping it echoes, the receiver's clock when that ping arrived, and every byte it got from us (mod 2^32). A sample, when it makes one. */
  pong(peerId: string, echoMs: number, remoteMs: number, deliveredBytes: number): DeliverySample | undefined {
    const marks = this.pings.get(peerId);
    const index = marks?.findIndex((mark) => mark.sentMs === echoMs) ?? -1;
    if (!marks || index < 0) return undefined;
    const ping = marks[index]!;
    marks.splice(0, index + 1);
    const reference = this.references.get(peerId);
    if (!reference) {
      this.references.set(peerId, { deliveredBytes, remoteMs, ping });
      return undefined;
    }
    const spanMs = wireMsDiff(remoteMs, reference.remoteMs);
    const received = (deliveredBytes - reference.deliveredBytes) >>> 0;
    // Too short a span, or too few bytes, to say anything yet: the next pong spans more.
    if (spanMs < MIN_SPAN_MS || received < MIN_SAMPLE_BYTES) return undefined;
    this.references.set(peerId, { deliveredBytes, remoteMs, ping });
    const sentAll = ping.sentAll - reference.ping.sentAll;
    const sentHere = ping.sentHere - reference.ping.sentHere;
    if (sentAll <= 0 || sentHere <= 0 || sentHere < sentAll * MIN_RECEIVER_SHARE) return undefined;
    // What this receiver got, scaled to everything the uplink carried meanwhile.
    const bytesPerS = (received / spanMs) * 1000 * (sentAll / sentHere);
    const localSpanMs = Math.max(wireMsDiff(ping.sentMs, reference.ping.sentMs), 1);
    const sentBytesPerS = (sentAll / localSpanMs) * 1000;
    // The bytes between two pings' arrivals are those sent between the pings: they can arrive
    // faster than they were sent only as a queue drains. A count far beyond that is no sample (a
    // receiver whose count restarted, a clock that jumped: one read 1.16 GB/s in the browser
    // swarm and held the pace there for the max filter's window); and a sample says at most what
    // was sent (a receiver's event loop that stalled and then stamped two pings close together
    // reads as a faster link, and the max filter keeps the fastest).
    if (bytesPerS > sentBytesPerS * MAX_DRAIN_SPEEDUP) return undefined;
    return { bytesPerS: Math.min(bytesPerS, sentBytesPerS), sentBytesPerS, appLimited: ping.appLimits !== reference.ping.appLimits };
  }

  forget(peerId: string): void {
    this.pings.delete(peerId);
    this.references.delete(peerId);
  }
}
