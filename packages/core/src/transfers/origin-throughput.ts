// What this viewer's downlink carries and whether the origin is in trouble, as the engine's own
// origin transfers measure it: the rate HTTP fallbacks are budgeted with (one per engine, every
// stream's transfers feed it).

/**
 * After the origin failed a request (an error status or a network failure), a requested segment
 * stops waiting for peers this much earlier, for ORIGIN_TROUBLE_MS (scheduler's originTroubleMs):
 * a player that waits until the last moment HTTP can make it must not find, at that moment, an
 * origin that needs a retry (hls.js waits 1 s) and may fail again. HTTP alone rides such bursts out
 * on a full buffer. In-flight and new P2P transfers keep the plain budget (a viewer the origin
 * refuses must keep its peers). Slow transfers are not taken as trouble: on a constrained downlink
 * they are the common case, and the simulator's VOD-critical runs stalled more with them.
 */
export const ORIGIN_TROUBLE_MARGIN_MS = 4000;
const ORIGIN_TROUBLE_MS = 30_000;
/** Origin transfers shorter than this are not timed: latency and TCP's slow start dominate them. */
const MIN_TIMED_BYTES = 32 * 1024;
/** Origin transfers whose rates the HTTP budget reads (its slowest): about the last 10-20 s of a live stream. */
const RECENT_SAMPLES = 8;

/**
 * What this viewer's downlink carries, as its origin transfers (player loads, live-edge seeding,
 * Range resumes) measure it: every byte that arrived while one ran, from the origin or from
 * peers, over its duration. An origin transfer fills the link, so that is the link's rate, not
 * the share one transfer got of it: several transfers at once share it (the scheduler's
 * `downlinkLeftBytes`), and the plan budgets a new one with what the others still have to receive.
 * One per engine: every stream's transfers share the link.
 */
export class OriginThroughput {
  /** From measurements only, smoothed; undefined before the first. */
  measuredBytesPerS: number | undefined;
  /** The latest RECENT_SAMPLES rates measured. */
  private readonly recent: number[] = [];
  /** Until when the origin counts as in trouble (see ORIGIN_TROUBLE_MARGIN_MS). */
  troubleUntilMs = -Infinity;
  /** Every byte the engine downloaded, from the origin or from peers: origin transfers time the link with it. */
  receivedBytes = 0;

  constructor(private readonly initialBytesPerS: number) {}

  /**
   * What plans budget HTTP with: the slowest of the recent transfers (the configured assumption
   * before the first). A player that waits for peers until HTTP must start has no buffer left for
   * a transfer slower than its budget; on a home link one in ten took two to four times the usual
   * (browser swarm, realistic profile: TCP behind a full uplink queue), and an average let those stall.
   */
  get estimateBytesPerS(): number {
    return this.recent.length > 0 ? Math.min(...this.recent) : this.initialBytesPerS;
  }

  /** Extra margin HTTP budgets need now. */
  marginMs(nowMs: number): number {
    return nowMs < this.troubleUntilMs ? ORIGIN_TROUBLE_MARGIN_MS : 0;
  }

  /** A request failed (not aborted by us). */
  failed(nowMs: number): void {
    this.troubleUntilMs = nowMs + ORIGIN_TROUBLE_MS;
  }

  /**
   * An origin transfer of `ownBytes` took `elapsedMs`, while the link carried `linkBytes` in all
   * (its own and every other download's).
   */
  sample(ownBytes: number, linkBytes: number, elapsedMs: number): void {
    if (ownBytes < MIN_TIMED_BYTES || elapsedMs <= 0) return;
    const bytesPerS = (Math.max(linkBytes, ownBytes) / elapsedMs) * 1000;
    this.recent.push(bytesPerS);
    if (this.recent.length > RECENT_SAMPLES) this.recent.shift();
    this.measuredBytesPerS = this.measuredBytesPerS === undefined ? bytesPerS : 0.7 * this.measuredBytesPerS + 0.3 * bytesPerS;
  }
}
