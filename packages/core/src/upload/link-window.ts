// What the uplink carried over windows of a second or more in which uploads always had more to
// send: the bytes the channels took, whether they filled up, and the bytes the receivers say they
// got (their pongs count every byte they received from us). Outside such windows the figures say
// how much there was to send, not what the link carries, and are not used.

export interface LinkReading {
  /** The channels filled up: this is what they took, bytes/s. */
  channelsBytesPerS: number | undefined;
  /** What the receivers got, bytes/s (undefined: no pong counted any). */
  deliveredBytesPerS: number | undefined;
}

export class LinkWindow {
  private startMs: number;
  private bytes = 0;
  private delivered = 0;
  private channelsFull = false;
  private idle = true;
  /** Each peer's last count of the bytes it got from us, for the deltas. */
  private readonly counts = new Map<string, number>();

  constructor(nowMs: number) {
    this.startMs = nowMs;
  }

  /** Payload bytes handed to the channels. */
  sent(bytes: number): void {
    this.bytes += bytes;
  }

  /** The channels hold all they may: the link (or SCTP) is the limit now. */
  full(): void {
    this.channelsFull = true;
  }

  /** Uploads ran out of data, or yielded: this window says how much there was, not what the link takes. */
  interrupted(): void {
    this.idle = true;
  }

  /** A peer's count of every byte it received from us (mod 2^32); its first count only sets where the deltas start. */
  deliveredTo(peerId: string, cumulativeBytes: number): void {
    const previous = this.counts.get(peerId);
    this.counts.set(peerId, cumulativeBytes);
    if (previous !== undefined) this.delivered += (cumulativeBytes - previous) >>> 0;
  }

  forget(peerId: string): void {
    this.counts.delete(peerId);
  }

  /**
   * A second or more since the window opened: closes it, opens the next (busy from the start when
   * `pending`), and returns what a busy window showed of the link (undefined: not busy throughout,
   * or too short yet).
   */
  close(nowMs: number, pending: boolean): LinkReading | undefined {
    const windowMs = nowMs - this.startMs;
    if (windowMs < 1000) return undefined;
    const busy = !this.idle;
    const reading: LinkReading = {
      channelsBytesPerS: this.channelsFull ? (this.bytes / windowMs) * 1000 : undefined,
      deliveredBytesPerS: this.delivered > 0 ? (this.delivered / windowMs) * 1000 : undefined,
    };
    this.startMs = nowMs;
    this.bytes = this.delivered = 0;
    this.channelsFull = false;
    this.idle = !pending;
    return busy ? reading : undefined;
  }
}
