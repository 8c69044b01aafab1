// What the uplink carries, as uploads see it: the bytes the channels took over windows of a second
// or more in which uploads always had more to send (and whether the channels filled up), and the
// rate at which a receiver got our bytes between two of our pings. The channel is ordered, so a
// ping arrives after every byte sent before it: a pong's count of the bytes received, over the
// receiver's clock between two pings' arrivals, is the rate the link delivered them at (as BBR's
// delivery rate), provided uploads never ran dry in between and that receiver got nearly all of
// them. Other readings say how much there was to send, not what the link carries.
import { wireMsDiff } from '../wire/peer-protocol.js';

export interface LinkReading {
  /** The channels filled up: this is what they took, bytes/s. */
  channelsBytesPerS: number | undefined;
  /**
   * Between two pings to the receiver that got nearly all our bytes meanwhile: the rate the link
   * delivered them at (over the receiver's clock), and the rate we sent them at (over ours);
   * undefined when none was measured since the last reading.
   */
  delivery: { deliveredBytesPerS: number; sentBytesPerS: number } | undefined;
}

/** A ping as sent: our clock on the wire, and the uploads' counters then. */
interface PingMark {
  sentMs: number;
  sentBytes: number;
  interruptions: number;
}

/** A receiver's last counted pong: its count, its clock at the ping's arrival, and that ping. */
interface PongMark {
  deliveredBytes: number;
  remoteMs: number;
  ping: PingMark;
}

/** A delivery rate between two pings counts when that receiver got at least this share of all the bytes sent meanwhile. */
const MAIN_RECEIVER_SHARE = 0.9;

export class LinkWindow {
  private startMs: number;
  private bytes = 0;
  private channelsFull = false;
  private idle = true;
  /** Payload bytes sent in all, and times uploads ran dry or yielded: what the ping marks record. */
  private sentBytes = 0;
  private interruptions = 0;
  private readonly pings = new Map<string, PingMark[]>();
  private readonly pongs = new Map<string, PongMark>();
  private delivery: LinkReading['delivery'];

  constructor(nowMs: number) {
    this.startMs = nowMs;
  }

  /** Payload bytes handed to the channels. */
  sent(bytes: number): void {
    this.bytes += bytes;
    this.sentBytes += bytes;
  }

  /** The channels hold all they may: the link (or SCTP) is the limit now. */
  full(): void {
    this.channelsFull = true;
  }

  /** Uploads ran out of data, or yielded: what went out meanwhile says how much there was, not what the link takes. */
  interrupted(): void {
    this.idle = true;
    this.interruptions++;
  }

  /** A ping goes out with `wireSentMs` (as the pong will echo it). */
  pingSent(peerId: string, wireSentMs: number): void {
    let marks = this.pings.get(peerId);
    if (!marks) this.pings.set(peerId, (marks = []));
    marks.push({ sentMs: wireSentMs, sentBytes: this.sentBytes, interruptions: this.interruptions });
    if (marks.length > 8) marks.shift();
  }

  /** A pong: the ping it echoes, the receiver's clock when that ping arrived, and every byte it got from us (mod 2^32). */
  pong(peerId: string, echoMs: number, remoteMs: number, deliveredBytes: number): void {
    const ping = this.pings.get(peerId)?.find((mark) => mark.sentMs === echoMs);
    if (!ping) return;
    const previous = this.pongs.get(peerId);
    this.pongs.set(peerId, { deliveredBytes, remoteMs, ping });
    if (!previous) return;
    const remoteSpanMs = wireMsDiff(remoteMs, previous.remoteMs);
    const localSpanMs = wireMsDiff(ping.sentMs, previous.ping.sentMs);
    const received = (deliveredBytes - previous.deliveredBytes) >>> 0;
    const sentMeanwhile = ping.sentBytes - previous.ping.sentBytes;
    const busy = ping.interruptions === previous.ping.interruptions;
    if (busy && remoteSpanMs > 0 && localSpanMs > 0 && sentMeanwhile > 0 && received >= sentMeanwhile * MAIN_RECEIVER_SHARE) {
      this.delivery = { deliveredBytesPerS: (received / remoteSpanMs) * 1000, sentBytesPerS: (sentMeanwhile / localSpanMs) * 1000 };
    }
  }

  forget(peerId: string): void {
    this.pings.delete(peerId);
    this.pongs.delete(peerId);
  }

  /**
   * What the uplink showed since the last reading: the latest delivery rate measured, and, a
   * second or more after the channels' window opened, what a busy window's channels took (the
   * window then closes and the next opens, busy from the start when `pending`).
   */
  read(nowMs: number, pending: boolean): LinkReading | undefined {
    const delivery = this.delivery;
    this.delivery = undefined;
    const windowMs = nowMs - this.startMs;
    let channelsBytesPerS: number | undefined;
    if (windowMs >= 1000) {
      if (!this.idle && this.channelsFull) channelsBytesPerS = (this.bytes / windowMs) * 1000;
      this.startMs = nowMs;
      this.bytes = 0;
      this.channelsFull = false;
      this.idle = !pending;
    }
    return delivery === undefined && channelsBytesPerS === undefined ? undefined : { channelsBytesPerS, delivery };
  }
}
