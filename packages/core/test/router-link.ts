// A browser's uplink as the governor meets it, for the pacing tests: channels that take every
// message at once (a browser's bufferedAmount stays near 0 until SCTP and the router's queue are
// full), a home router's drop-free FIFO queue of a fixed rate behind them, and receivers that
// answer pings the way PeerSession does (the ping waits behind the data sent before it). Timers
// may fire late, as in a page sharing two cores with seven others.
import type { UploadGovernor, UploadSource } from '../src/upload/upload-governor.js';
import { VirtualClock, type Prng } from '@shoal/sim/kit';

/** An upload with always more to send (or `bytes` in all), to one receiver. */
export class EndlessSource implements UploadSource {
  readonly bufferedAmount = 0;
  sent = 0;
  constructor(
    private readonly link: RouterLink,
    readonly receiver: string,
    public backlogBytes = Infinity,
  ) {}
  get nextDeadlineMs(): number | undefined {
    return this.backlogBytes > 0 ? Infinity : undefined;
  }
  *queued(): Iterable<{ remainingBytes: number; deadlineMs: number }> {
    if (this.backlogBytes > 0) yield { remainingBytes: Math.min(this.backlogBytes, 10_000_000), deadlineMs: Infinity };
  }
  sendChunk(maxBytes: number): number {
    const bytes = Math.min(maxBytes, this.backlogBytes);
    this.backlogBytes -= bytes;
    this.sent += bytes;
    this.link.carry(this.receiver, bytes);
    return bytes;
  }
  uploading(): void {}
  burstEdge(): void {
    this.link.ping(this.receiver);
  }
}

/** The router's queue: one rate for every receiver, FIFO, `latencyMs` beyond it. */
export class RouterLink {
  /** When the queue is empty again. */
  private freeAtMs = 0;
  private readonly received = new Map<string, number>();
  private readonly lastPingMs = new Map<string, number>();

  constructor(
    private readonly clock: VirtualClock,
    readonly governor: UploadGovernor,
    public bytesPerS: number,
    private readonly latencyMs = 20,
  ) {}

  /** Bytes handed to the channel now: they leave the router in order. */
  carry(receiver: string, bytes: number): void {
    const now = this.clock.now();
    this.freeAtMs = Math.max(this.freeAtMs, now) + (bytes / this.bytesPerS) * 1000;
    const arrival = this.freeAtMs + this.latencyMs;
    this.clock.at(arrival, () => this.received.set(receiver, (this.received.get(receiver) ?? 0) + bytes));
  }

  /** The queue ahead of a message sent now, ms. */
  queueMs(): number {
    return Math.max(0, this.freeAtMs - this.clock.now());
  }

  /** A ping to `receiver` now (at most every 250 ms, as PeerSession.pingNow): its pong comes back when it got through the queue. */
  ping(receiver: string): void {
    const now = this.clock.now();
    if (now - (this.lastPingMs.get(receiver) ?? -Infinity) < 250) return;
    this.lastPingMs.set(receiver, now);
    const source = this.sourceOf?.(receiver);
    this.governor.pingSent(receiver, now, source?.sent ?? 0);
    const arrival = Math.max(this.freeAtMs, now) + this.latencyMs;
    this.clock.at(arrival, () => {
      const delivered = this.received.get(receiver) ?? 0;
      this.clock.at(arrival + this.latencyMs, () => {
        this.governor.delivered(receiver, now, arrival, delivered >>> 0);
        this.governor.delaySample(receiver, arrival - now, arrival + this.latencyMs - now);
      });
    });
  }

  /** The source that sends to each receiver (set by the test). */
  sourceOf: ((receiver: string) => EndlessSource | undefined) | undefined;
}

/** A clock whose timers fire up to `maxLagMs` late (uniformly), as a busy page's do. */
export function laggingClock(prng: Prng, maxLagMs: number): VirtualClock {
  const clock = new VirtualClock();
  const setTimeout = clock.setTimeout.bind(clock);
  clock.setTimeout = (callback, delayMs) => setTimeout(callback, delayMs + prng.next() * maxLagMs);
  return clock;
}

/** Pings each receiver every `intervalMs` for `ms`, as PeerSession does while it uploads, and returns the governor's pace each second. */
export async function runPinging(clock: VirtualClock, link: RouterLink, receivers: readonly string[], ms: number, intervalMs = 250): Promise<number[]> {
  const paces: number[] = [];
  for (let t = 0; t < ms; t += intervalMs) {
    for (const receiver of receivers) link.ping(receiver);
    await clock.advance(intervalMs);
    if ((t + intervalMs) % 1000 === 0) paces.push(link.governor.stats.paceBytesPerS);
  }
  return paces;
}
